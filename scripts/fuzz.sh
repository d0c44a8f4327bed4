#!/usr/bin/env bash
# Runs every fuzz target of rated for FUZZTIME each (default 60s), one at a time under nice, and
# prints one line per target: package, target, result, executions (counted by internal/fuzzcount
# in every worker: go test's own "execs" figure lags far behind when executions do file I/O). A
# crasher is written by `go test` to <package>/testdata/fuzz/<target>/ and stays there as a
# regression seed once fixed.
# Usage: scripts/fuzz.sh [target-regexp]   (FUZZTIME=5m scripts/fuzz.sh FuzzLoadTree)
set -u
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-60s}
only=${1:-.}
targets="
pkg/bench FuzzReadBEIR
pkg/catalog FuzzDecodeJSONL
pkg/encode/tokenizer FuzzLoad
pkg/encode/tokenizer FuzzEncode
pkg/encode FuzzLoadConfig
pkg/encode FuzzEmbeddingCache
pkg/encode FuzzPositionLimit
pkg/encode FuzzONNXInfo
pkg/encode FuzzReadHFFolder
pkg/crawl FuzzParsePython
pkg/crawl FuzzCrawlN8n
pkg/crawl FuzzJSEndpoints
pkg/crawl FuzzLoadTreeZip
pkg/crawl FuzzLoadTreeTar
pkg/crawl FuzzGitListing
pkg/crawl FuzzParseSources
pkg/crawl FuzzOpenProbeJournal
pkg/evaldynamic FuzzLoadConfig
pkg/synth FuzzParseQueries
pkg/synth FuzzParseScore
pkg/synth FuzzOpenJournal
pkg/synth FuzzReadAuditAgreement
pkg/synth FuzzParseRealQueries
pkg/synth FuzzLoadLLMConfig
pkg/train FuzzReadNegatives
pkg/train FuzzLoadArtifacts
pkg/train FuzzFloatInitializers
pkg/reproduce FuzzParseExpected
internal/binenc FuzzReader
internal/httpretry FuzzParseRetryAfter
pkg/bandit FuzzRestore
pkg/decisionlog FuzzDecode
pkg/router FuzzLoadCalibration
pkg/router FuzzStateRecords
pkg/serve FuzzMCPArguments
pkg/serve FuzzFeedbackHandler
pkg/serve FuzzPutToolHandler
pkg/serve FuzzSelectHandler
"
status=0
while read -r pkg target; do
	[ -z "$pkg" ] && continue
	echo "$pkg $target" | grep -Eq -- "$only" || continue
	log=$(mktemp)
	counts=$(mktemp -d)
	if RATED_FUZZ_COUNT=$counts nice -n 10 go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "./$pkg" >"$log" 2>&1; then
		result=ok
	else
		result=FAIL
		status=1
	fi
	execs=$(for f in "$counts"/"$target"-*; do [ -f "$f" ] && cat "$f" && echo; done | awk '{s += $1} END {print s + 0}')
	if [ "$execs" = 0 ]; then # a target without fuzzcount.Tick: go test's figure, a lower bound
		execs="$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2) (go test's figure, a lower bound)"
	fi
	echo "$pkg $target $result $execs execs in $FUZZTIME"
	[ "$result" = FAIL ] && sed 's/^/    /' "$log" | tail -25
	rm -rf "$log" "$counts"
done <<<"$targets"
exit $status
