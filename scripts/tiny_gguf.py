"""Write a tiny random-weight llama model as GGUF, for checking real servers offline.

The model knows nothing, but a server that constrains its output to a JSON schema (a grammar)
still makes it answer in the judge's shape, which is all the interop check needs: the server's
HTTP dialect, its refusals and its logprobs. Random weights alone never close a string, so one
embedding dimension is held constant through every block and read by the output layer as a
preference for closing quotes, braces and separators; which of 0 and 1 it answers stays random.
Usage: python scripts/tiny_gguf.py OUT.gguf
"""

from __future__ import annotations

import sys

import gguf
import numpy as np

EMBED, LAYERS, HEADS, FF, CONTEXT = 64, 2, 4, 128, 4096
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
          "{% endfor %}<|im_start|>assistant\n")


def vocabulary() -> tuple[list[str], list[float], list[int]]:
    """A SentencePiece-style vocabulary: specials, the 256 byte tokens, printable ASCII."""
    tokens = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL,
             gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    types += [gguf.TokenType.BYTE] * 256
    for code in range(32, 127):
        tokens.append("▁" if chr(code) == " " else chr(code))
        types.append(gguf.TokenType.NORMAL)
    scores = [0.0] * len(tokens)
    return tokens, scores, [int(t) for t in types]


def write(path: str, seed: int = 0) -> None:
    """Write the model to ``path``."""
    rng = np.random.default_rng(seed)
    tokens, scores, types = vocabulary()
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_name("cp-annotator-tiny-random")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(EMBED)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FF)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(HEADS)
    writer.add_rope_dimension_count(EMBED // HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(4)  # <|im_end|> ends a chat turn
    writer.add_unk_token_id(0)
    writer.add_add_bos_token(False)
    writer.add_chat_template(CHATML)

    def tensor(name: str, *shape: int) -> None:
        scale = 1.0 if len(shape) == 1 else 0.02
        data = (np.ones(shape) if len(shape) == 1 else rng.normal(0, scale, shape))
        writer.add_tensor(name, data.astype(np.float32))

    vocab = len(tokens)
    # Dimension 0 of the residual stream: 4.0 in every embedding, untouched by the blocks (their
    # output rows 0 are zero), so the output layer's column 0 acts as a fixed bias per token.
    embedding = rng.normal(0, 0.02, (vocab, EMBED))
    embedding[:, 0] = 4.0
    output = rng.normal(0, 0.02, (vocab, EMBED))
    output[:, 0] = 0.0
    for text, bias in (('"', 10.0), ("}", 6.0), (",", 5.0), (":", 4.0), ("▁", -10.0)):
        output[tokens.index(text), 0] = bias
    for byte in (0x09, 0x0A, 0x0D, 0x20):
        output[tokens.index(f"<0x{byte:02X}>"), 0] = -10.0
    writer.add_tensor("token_embd.weight", embedding.astype(np.float32))
    tensor("output_norm.weight", EMBED)
    writer.add_tensor("output.weight", output.astype(np.float32))
    for i in range(LAYERS):
        tensor(f"blk.{i}.attn_norm.weight", EMBED)
        for part in ("q", "k", "v"):
            tensor(f"blk.{i}.attn_{part}.weight", EMBED, EMBED)
        attn_out = rng.normal(0, 0.02, (EMBED, EMBED))
        attn_out[0, :] = 0.0
        writer.add_tensor(f"blk.{i}.attn_output.weight", attn_out.astype(np.float32))
        tensor(f"blk.{i}.ffn_norm.weight", EMBED)
        tensor(f"blk.{i}.ffn_gate.weight", FF, EMBED)
        tensor(f"blk.{i}.ffn_up.weight", FF, EMBED)
        down = rng.normal(0, 0.02, (EMBED, FF))
        down[0, :] = 0.0
        writer.add_tensor(f"blk.{i}.ffn_down.weight", down.astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    write(sys.argv[1] if len(sys.argv) > 1 else "tiny.gguf")
