#!/usr/bin/env bash
# EcoAgent from the crawled catalog, end to end (issue 14; docs/BUILD-BENCH.md, "EcoAgent release"):
#
#   scripts/ecoagent-build.sh STAGE...      stages: setup crawl restore audit syn judge real release
#                                            finetune eval checkpoint, or all (in that order,
#                                            checkpoint excepted)
#
#   setup       rated setup for the encoders, the crawl sources, Ollama + Gemma + the chosen
#               generator, and every candidate's GGUF (RATED_LLM_CANDIDATES=all 45-llm-generator.sh)
#   crawl       rated crawl of the pinned packages -> $OUT/catalog.jsonl (4,002 tools)
#   audit       per candidate (Gemma 3 270M baseline, Qwen2.5-Coder 0.5B and 1.5B, SmolLM2 135M):
#               Syn queries for the same 32 tools (8 per platform, seed 1), 10 asked per tool,
#               -> $OUT/audit/<name>/; wall time and counts -> $OUT/audit/<name>.time
#   syn         EcoAgent-Syn with the chosen generator ($GENERATOR): the corpus is the whole
#               catalog, queries for at most 480 tools per platform (seed 1: n8n sampled, the
#               other three platforms whole = 1,002 tools), 10 asked per tool, hard negatives by
#               bge-small-en-v1.5 -> $OUT/syn-build/, in growing steps of tools per platform
#               ($SYN_STEPS: 32, 120, 240, 480 and 1,002 tools)
#   judge       200 sampled Syn queries per candidate (all when fewer were kept): each query's
#               intended tool ranked by bge-small-en-v1.5 over the whole catalog, and the first
#               $JUDGE_FIRST (the hand-labelled ones) judged by $JUDGE with the validator prompt ->
#               $OUT/audit/<name>.csv (human_label filled by hand; kept when judged again)
#   real        EcoAgent-Real: the 765 ToolBench queries, top 5 of the 4,002 tools under
#               bge-small-en-v1.5, pairs below cosine $REAL_MIN dropped, validated by $GENERATOR
#               -> $OUT/real-build/, in growing steps of queries ($REAL_STEPS)
#   release     the shipped release data/ecoagent/ from syn-build and real-build
#               (scripts/ecoagent-release.sh)
#   checkpoint  the journals, gzip-compressed, into data/ecoagent/journal/ (commit them so that
#               a later session resumes: `restore` copies them back)
#   restore     data/ecoagent/journal/* back into $OUT when $OUT has none (a new machine)
#   finetune    rated finetune on data/ecoagent/syn train: MiniLM and bge-small (shared encoder),
#               MiniLM and e5-small-v2 two towers (DRAGON-style) -> $OUT/ft-<model>-<towers>/, and
#               e5's mixed per tower with its base (rated model interpolate) -> $OUT/wise-e5-small-v2-dual/
#   eval        Table 1 (Syn test, Real test; paired tests against each frozen encoder, e5 included) and
#               Table 2 (Real test, frozen vs fine-tuned MiniLM) -> $OUT/table{1,2}-*/
#
# Every stage resumes: build-bench journals every finished request and skips it on a rerun; the
# judge journals under <dir>/audit/. LLM servers are started with `rated llm up` (idempotent),
# one per model on its own port, and left running (stop them with `rated llm down --config …`).
# Environment: OUT [runs/ecoagent], GENERATOR [qwen2.5-coder-1.5b], JUDGE [qwen2.5-coder-1.5b],
# REAL_MIN [0.6], SYN_STEPS ["8 30 60 120 480"], REAL_STEPS ["100 765"], JUDGE_FIRST [50],
# NICE [10].
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
assets=${RATED_HOME:-${RATED_ASSETS:-$root/.rated}}
export RATED_HOME=$assets
out=${OUT:-runs/ecoagent}
generator=${GENERATOR:-qwen2.5-coder-1.5b}
judge=${JUDGE:-qwen2.5-coder-1.5b}
real_min=${REAL_MIN:-0.6}
syn_steps=${SYN_STEPS:-8 30 60 120 480}
judge_first=${JUDGE_FIRST:-50}
real_steps=${REAL_STEPS:-100 765}
nice_n=${NICE:-10}
rated=$root/bin/rated
release=$root/data/ecoagent
# The Gemma baseline is served on a port of its own so that it never shares (or stops) the
# default server of configs/llm.yaml that other work may be using.
gemma_port=18438
candidates=(smollm2-135m gemma3-270m qwen2.5-coder-0.5b qwen2.5-coder-1.5b)

mkdir -p "$out" bin
go build -o "$rated" .

cfg_of() { # cfg_of NAME: the LLM configuration of a candidate
  if [ "$1" = gemma3-270m ]; then echo "$root/configs/llm.yaml"; else echo "$root/configs/llm-candidates/$1.yaml"; fi
}
with_port() { # with_port NAME CMD...: runs CMD with the Gemma baseline's port when NAME is Gemma
  local name=$1
  shift
  if [ "$name" = gemma3-270m ]; then RATED_LLM_PORT=$gemma_port "$@"; else "$@"; fi
}
llm_up() { with_port "$1" nice -n "$nice_n" "$rated" llm up --config "$(cfg_of "$1")"; }
# --adopt-journal: the journals under data/ecoagent/journal were written by this script, with
# these generator configurations and seed, before build-bench's journal key held the settings.
bb() { nice -n "$nice_n" "$rated" build-bench --adopt-journal "$@"; }

stage_setup() {
  "$rated" setup onnxruntime models sources llm
  RATED_LLM_CANDIDATES=all bash scripts/setup.d/45-llm-generator.sh
}

stage_crawl() {
  [ -s "$out/catalog.jsonl" ] || "$rated" crawl --out "$out/catalog.jsonl" --stats-out "$out/crawl-stats.json" >/dev/null
  echo "ecoagent: catalog $out/catalog.jsonl ($(wc -l <"$out/catalog.jsonl") tools)"
}

stage_audit() {
  local name
  for name in "${candidates[@]}"; do
    # Done when built; after a restore the journal is complete and only the assembly runs again
    # (the first run's .time is kept).
    [ -s "$out/audit/$name.time" ] && [ -s "$out/audit/$name/syn/queries.jsonl" ] && continue
    llm_up "$name"
    local start
    start=$(date +%s)
    local load0
    load0=$(cut -d' ' -f1 /proc/loadavg)
    with_port "$name" bb --config "$(cfg_of "$name")" --catalog "$out/catalog.jsonl" --out "$out/audit/$name" \
      --no-real --per-platform 8 --sample-seed 1 --queries-per-tool 10 --retriever bm25
    [ -s "$out/audit/$name.time" ] || printf '{"candidate": "%s", "wall_s": %d, "load_start": %s, "load_end": %s}\n' \
      "$name" "$(($(date +%s) - start))" "$load0" "$(cut -d' ' -f1 /proc/loadavg)" >"$out/audit/$name.time"
  done
}

stage_syn() {
  local dir=$out/syn-build n
  # The audit's tools are a subset of this sample (same seed, and the first platform's shuffle
  # is the same), and its requests are the same (same prompt, seed and key): start from them.
  if [ ! -s "$dir/journal/syn.jsonl" ] && [ -s "$out/audit/$generator/journal/syn.jsonl" ]; then
    mkdir -p "$dir/journal"
    cp "$out/audit/$generator/journal/syn.jsonl" "$dir/journal/syn.jsonl"
  fi
  llm_up "$generator"
  # In growing steps of tools per platform (--per-platform K, seed 1: each platform shuffled with
  # one seeded generator, its first K taken). The first step, 8 per platform, is the audit's 32
  # tools (already in the journal); every step's tools are in the last step's 1,002 (n8n is
  # shuffled first in every step, the other platforms are taken whole in the last), answers
  # already journaled are reused, and every finished step is a complete benchmark.
  for n in $syn_steps; do
    bb --config "$(cfg_of "$generator")" --catalog "$out/catalog.jsonl" --out "$dir" --no-real --full-corpus \
      --per-platform "$n" --sample-seed 1 --queries-per-tool 10 --retriever dense:bge-small-en-v1.5
    stage_checkpoint
  done
}

stage_judge() {
  llm_up "$judge"
  # The chosen generator's sample first: its verdicts matter most.
  local name order=("$generator")
  for name in "${candidates[@]}"; do [ "$name" != "$generator" ] && order+=("$name"); done
  for name in "${order[@]}"; do
    [ -d "$out/audit/$name/syn" ] || { echo "ecoagent: no audit build for $name yet (stage audit)"; continue; }
    nice -n "$nice_n" "$rated" build-bench audit-syn --dir "$out/audit/$name" --n 200 --seed 1 \
      --rank-retriever dense:bge-small-en-v1.5 --rank-catalog "$out/catalog.jsonl" \
      --judge-config "$(cfg_of "$judge")" --judge-first "$judge_first" --out-csv "$out/audit/$name.csv"
  done
}

stage_real() {
  local n
  llm_up "$generator"
  # In growing steps of ToolBench queries (--real-limit: the first N in file order), each a
  # complete EcoAgent-Real; the journal carries the validated pairs from one step to the next.
  for n in $real_steps; do
    bb --config "$(cfg_of "$generator")" --catalog "$out/catalog.jsonl" --out "$out/real-build" --no-syn --full-corpus \
      --retriever dense:bge-small-en-v1.5 --min-retrieval-score "$real_min" --real-limit "$n"
    stage_checkpoint
  done
}

stage_finetune() {
  # The paper's recipe on the release's Syn train split (docs/FINETUNE.md): MiniLM and bge-small
  # with one encoder for both sides, and MiniLM as DRAGON-style two towers; each resumes from its
  # checkpoints. Warm-up: a tenth of the steps.
  local syn=$release/syn pairs steps warmup model towers dir
  pairs=$(($(gunzip -c "$syn/qrels/train.tsv.gz" | wc -l) - 1))
  steps=$((pairs / 8))
  warmup=$((steps / 10 > 0 ? steps / 10 : 1))
  for spec in all-minilm-l6-v2:shared bge-small-en-v1.5:shared all-minilm-l6-v2:dual; do
    model=${spec%%:*} towers=${spec##*:}
    dir=$out/ft-$model-$towers
    nice -n "$nice_n" "$rated" finetune --model "$assets/models/$model" --bench "$syn" --out "$dir" --towers "$towers" \
      --batch 8 --max-len 64 --lr 2e-5 --warmup "$warmup" --epochs 1 --val-every 50 --checkpoint-every 50 --seed 1
  done
  # e5-small-v2 as two towers with the release's hard negatives (the run of docs/RESULTS.md,
  # warm-up 89 as it ran), then mixed per tower with its base at the shares chosen on Real dev
  # (query 0.5, doc 0.1: docs/RESULTS.md, "Mixing the fine-tune with its base").
  gunzip -c "$syn/negatives.jsonl.gz" >"$out/syn-negatives.jsonl"
  nice -n "$nice_n" "$rated" finetune --model "$assets/models/e5-small-v2" --bench "$syn" --negatives "$out/syn-negatives.jsonl" \
    --out "$out/ft-e5-small-v2-dual" --towers dual --train-split train --val-split - --max-len 64 --lr 2e-5 \
    --warmup 89 --batch 8 --epochs 1 --checkpoint-every 20 --seed 1
  "$rated" model interpolate --base "$assets/models/e5-small-v2" --tuned "$out/ft-e5-small-v2-dual" \
    --alpha-query 0.5 --alpha-doc 0.1 --out "$out/wise-e5-small-v2-dual"
}

stage_eval() {
  # Table 1 before and after fine-tuning on Syn test and Real test (paired tests against each
  # frozen encoder), and Table 2 on Real test with the frozen and the fine-tuned MiniLM.
  local rs=bm25,dense:all-minilm-l6-v2,dense:$out/ft-all-minilm-l6-v2-shared,dense:$out/ft-all-minilm-l6-v2-dual
  rs=$rs,dense:bge-small-en-v1.5,dense:$out/ft-bge-small-en-v1.5-shared
  rs=$rs,dense:e5-small-v2,dense:$out/ft-e5-small-v2-dual,dense:$out/wise-e5-small-v2-dual
  local part base
  for part in syn real; do
    for base in all-minilm-l6-v2 bge-small-en-v1.5 e5-small-v2; do
      nice -n "$nice_n" "$rated" eval offline --bench "$release/$part" --split test --retrievers "$rs" \
        --baseline "dense:$base" --out "$out/table1-$part-vs-$base"
    done
  done
  for enc in "$assets/models/all-minilm-l6-v2" "$out/ft-all-minilm-l6-v2-shared"; do
    nice -n "$nice_n" "$rated" eval dynamic --bench "$release/real" --split test --encoder "$enc" \
      --out "$out/table2-$(basename "$enc")"
  done
}

stage_release() {
  bash scripts/ecoagent-release.sh "$out/syn-build" "$out/real-build" "$release"
}

# journals: every journal of the run, as (path under $out, file).
journals() { (cd "$out" && find . -path '*/journal/*.jsonl' -o -path '*/audit/judge-*.jsonl' | sed 's|^\./||' | sort); }

stage_checkpoint() {
  local j
  mkdir -p "$release/journal"
  while read -r j; do
    mkdir -p "$release/journal/$(dirname "$j")"
    gzip -9n -c "$out/$j" >"$release/journal/$j.gz.tmp"
    mv "$release/journal/$j.gz.tmp" "$release/journal/$j.gz"
  done < <(journals)
  # The audit's CSVs (with the hand labels) and run times go to the release's audit/.
  mkdir -p "$release/audit"
  for j in "$out"/audit/*.csv "$out"/audit/*.time; do
    [ -e "$j" ] && cp "$j" "$release/audit/"
  done
  echo "ecoagent: journals checkpointed under $release/journal ($(du -sh "$release/journal" | cut -f1)), audit files under $release/audit; commit them"
}

stage_restore() {
  local g j
  [ -d "$release/journal" ] || { echo "ecoagent: nothing to restore"; return; }
  while read -r g; do
    j=${g%.gz}
    if [ ! -s "$out/$j" ]; then
      mkdir -p "$out/$(dirname "$j")"
      gunzip -c "$release/journal/$g" >"$out/$j"
      echo "ecoagent: restored $out/$j"
    fi
  done < <(cd "$release/journal" && find . -name '*.jsonl.gz' | sed 's|^\./||' | sort)
  # The hand labels live in the audit CSVs: the judge keeps them only if they are in $OUT.
  mkdir -p "$out/audit"
  for g in "$release"/audit/*.csv "$release"/audit/*.time; do
    [ -e "$g" ] && [ ! -e "$out/audit/$(basename "$g")" ] && cp "$g" "$out/audit/" && echo "ecoagent: restored $out/audit/$(basename "$g")"
  done
  return 0
}

main() {
  local stages=("$@") s t
  [ "${#stages[@]}" -eq 0 ] && stages=(all)
  for s in "${stages[@]}"; do
    case "$s" in
      all) for t in setup crawl restore audit syn judge real release finetune eval; do "stage_$t"; done ;;
      setup | crawl | audit | syn | judge | real | release | checkpoint | restore | finetune | eval) "stage_$s" ;;
      *) echo "ecoagent-build: unknown stage $s (setup crawl restore audit syn judge real release checkpoint finetune eval, or all)" >&2; exit 2 ;;
    esac
  done
}
# One line: bash has read the whole script before it runs, so editing the file during a long run
# cannot change what this run does.
main "$@"; exit $?
