"""The site's content: what its pages say beyond what normref computes, with the schema that checks it.

- the glossary (``glossary.yml``, :mod:`.glossary`): the site's dictionary, its jieba word parts and its
  style and vocabulary rules;
- the card bank (``cards.yml``, :mod:`.cards`) and the words its spoken-answer checks look for
  (``spoken.yml``);
- the interview quiz (``quiz.yml``, :mod:`.quiz`);
- the claim ledger's data (``claims.yml``, loaded and checked by :mod:`normsite.ledger`);
- the one validation layer of these files, on pydantic (:mod:`.schema`), and the schema of normref's figure
  texts (:mod:`.figure_texts`: normref reads ``figures.yml`` with plain checks, the site validates it whole);
- the one directive grammar, ``[[KIND: NAME]]`` (:mod:`.grammar`);
- the widget data and page values drawn from this content, registered into normref's registries
  (:mod:`.datasets`, :mod:`.values`; ``import normsite`` plugs them in).

All of the content's data files live here, beside their loaders. Each loader declares the files it reads,
relative to this folder, as ``READS`` (a literal tuple, also given as ``__cache_files__`` so that
``normref.cache`` counts the files' bytes with the loader's source in every key whose closure holds it).

The arrows: this package imports normref (its labels, registries, the cache's key recipe), never the reverse;
normref's wheel holds none of it.
"""
