#!/usr/bin/env bash
# Re-vendor KaTeX's stylesheet and woff2 fonts from the npm registry.
#
# Formulas are rendered to HTML at build time by PyKaTeX (which embeds KaTeX
# 0.16.22), so the site ships no KaTeX JavaScript, only the stylesheet and the
# fonts it names. They must match PyKaTeX's KaTeX version exactly. We keep only
# the woff2 fonts (every browser we target reads woff2) and drop the woff/ttf
# fallbacks from the @font-face rules so that no link points at a missing file.
# The result is committed under overrides/assets/katex/ so that a fresh machine
# with only Python needs no npm.
set -euo pipefail
VERSION=${1:-0.16.22}
here=$(cd "$(dirname "$0")/.." && pwd)
dest="$here/overrides/assets/katex"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "katex@$VERSION" >/dev/null 2>&1 && tar xzf "katex-$VERSION.tgz")
rm -rf "$dest" && mkdir -p "$dest/fonts"
cp "$tmp"/package/dist/fonts/*.woff2 "$dest/fonts/"
cp "$tmp"/package/LICENSE "$dest/LICENSE"
python3 - "$tmp/package/dist/katex.min.css" "$dest/katex.min.css" <<'PY'
import re, sys
css = open(sys.argv[1], encoding="utf-8").read()
css = re.sub(r',url\([^)]*\.woff\) format\("woff"\),url\([^)]*\.ttf\) format\("truetype"\)', "", css)
assert ".woff)" not in css and ".ttf)" not in css, "unexpected @font-face layout"
open(sys.argv[2], "w", encoding="utf-8").write(css)
PY
echo "$VERSION" > "$dest/VERSION"
echo "vendored KaTeX $VERSION into $dest"
