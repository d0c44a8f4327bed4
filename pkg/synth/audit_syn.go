package synth

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// The Syn audit asks, for a sample of generated queries, whether the tool the query was written
// for (its only positive) is the right tool for it: a second model judges every sampled query
// with the validator prompt, and a person labels some of them (human_label, as in the Real audit).

// SynAuditColumns is the header of a Syn audit CSV.
var SynAuditColumns = []string{"query_id", "query", "words", "tool_id", "tool_name", "tool_description", "retriever_rank", "judge_score", "judge_keep", "human_label"}

// RankDepth is how deep RankSynAudit looks for the intended tool.
const RankDepth = 100

// SynAuditItem is one sampled Syn query with its intended tool and, once judged, the judge's score.
type SynAuditItem struct {
	QueryID, Query, ToolID string
	// Judged is false until a judge scored the pair.
	Judged     bool
	JudgeScore float64
	// Rank is the intended tool's rank for the query under a retriever over the whole catalog
	// (1 = first; RankDepth+1 = not in the first RankDepth); 0 = not ranked.
	Rank int
}

// RankSynAudit ranks every item's intended tool for its query under r (whose corpus should be the
// whole catalog): a second, model-free check of whether the query points at its tool.
func RankSynAudit(r retrieve.Retriever, items []SynAuditItem) error {
	texts := make([]string, len(items))
	for i, it := range items {
		texts[i] = it.Query
	}
	r, err := prefetch(r, texts, RankDepth)
	if err != nil {
		return err
	}
	for i := range items {
		cands, err := r.Search(items[i].Query, RankDepth)
		if err != nil {
			return err
		}
		items[i].Rank = RankDepth + 1
		for k, c := range cands {
			if c.ID == items[i].ToolID {
				items[i].Rank = k + 1
				break
			}
		}
	}
	return nil
}

// SampleSynAudit draws up to n queries of a built EcoAgent-Syn (all splits) uniformly without
// replacement with rng, each with its positive tool; the result is ordered by query id.
func SampleSynAudit(b *bench.Bench, n int, rng *rand.Rand) ([]SynAuditItem, error) {
	splits := make([]string, 0, len(b.Splits))
	for s := range b.Splits {
		splits = append(splits, s)
	}
	sort.Strings(splits)
	var all []SynAuditItem
	for _, q := range b.Queries {
		var pos []string
		for _, s := range splits {
			pos = append(pos, b.Relevant(s, q.ID)...)
		}
		if len(pos) != 1 {
			return nil, fmt.Errorf("syn audit: query %s has %d positive tools, want 1", q.ID, len(pos))
		}
		all = append(all, SynAuditItem{QueryID: q.ID, Query: q.Text, ToolID: pos[0]})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].QueryID < all[j].QueryID })
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	if n < len(all) {
		all = all[:n]
	}
	sort.Slice(all, func(i, j int) bool { return all[i].QueryID < all[j].QueryID })
	return all, nil
}

// JudgeSynAudit scores each item's (query, intended tool) pair with gen and the validator prompt
// of cfg (every pair is validated: cfg.MinRetrievalScore is ignored), journaled in j so that an
// interrupted judgement resumes. Items whose judgement failed for good stay unjudged; pass a
// prefix of the sample to judge only those items.
func JudgeSynAudit(ctx context.Context, gen Generator, items []SynAuditItem, tools []catalog.Tool, cfg RealConfig, j *Journal, p Progress, now func() time.Time) error {
	pairs := make([]RealPair, len(items))
	for i, it := range items {
		pairs[i] = RealPair{Query: RealQuery{ID: it.QueryID, Text: it.Query}, ToolID: it.ToolID, RetrievalScore: 1}
	}
	cfg.MinRetrievalScore = 0
	if err := ValidateReal(ctx, gen, pairs, tools, cfg, j, p, now); err != nil {
		return err
	}
	byID := make(map[string]catalog.Tool, len(tools))
	for _, t := range tools {
		byID[t.ID] = t
	}
	for i := range items {
		if r, ok := j.Get(cfg.journalKey(pairs[i], byID[pairs[i].ToolID])); ok && r.OK {
			items[i].Judged, items[i].JudgeScore = true, r.Score
		}
	}
	return nil
}

// WriteSynAuditCSV writes the items for a person to label; judge_keep is 1 when the judge's score
// is at least keep, empty when the item was not judged. When path already holds an audit CSV,
// its human_label values are kept (by query_id), so judging again never loses a person's labels.
func WriteSynAuditCSV(path string, items []SynAuditItem, tools []catalog.Tool, keep float64) error {
	byID := map[string]catalog.Tool{}
	for _, t := range tools {
		byID[t.ID] = t
	}
	labels := map[string]string{}
	if _, err := os.Stat(path); err == nil {
		err := readCSV(path, []string{"query_id", "human_label"}, func(_ int, cell func(string) string) error {
			if l := strings.TrimSpace(cell("human_label")); l != "" {
				labels[cell("query_id")] = l
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("keeping the labels of %s: %w", path, err)
		}
	}
	return writeCSV(path, SynAuditColumns, func(emit func([]string) error) error {
		for _, it := range items {
			t := byID[it.ToolID]
			score, k := "", ""
			if it.Judged {
				score, k = strconv.FormatFloat(it.JudgeScore, 'f', -1, 64), "0"
				if it.JudgeScore >= keep {
					k = "1"
				}
			}
			rank := ""
			if it.Rank > 0 {
				rank = strconv.Itoa(it.Rank)
			}
			row := []string{it.QueryID, it.Query, strconv.Itoa(WordCount(it.Query)), it.ToolID, t.Name, oneLine(t.Description), rank, score, k, labels[it.QueryID]}
			if err := emit(row); err != nil {
				return err
			}
		}
		return nil
	})
}

// SynAuditSummary is what a Syn audit CSV says about the generator.
type SynAuditSummary struct {
	Sampled int `json:"sampled"`
	// Judged, JudgeRight: pairs the judge scored, and those at or above the keep score.
	Judged         int     `json:"judged"`
	JudgeRight     int     `json:"judge_right"`
	JudgePrecision float64 `json:"judge_precision"`
	// Labelled, HumanRight: pairs a person labelled, and those labelled right.
	Labelled       int     `json:"human_labelled"`
	HumanRight     int     `json:"human_right"`
	HumanPrecision float64 `json:"human_precision"`
	// JudgeHumanAgree counts the labelled and judged pairs on which both say the same.
	JudgeHumanBoth  int     `json:"judged_and_labelled"`
	JudgeHumanAgree int     `json:"judge_human_agree"`
	JudgeHumanRate  float64 `json:"judge_human_agreement"`
	// Words: length of the sampled queries in words.
	WordsMin    int     `json:"words_min"`
	WordsP25    int     `json:"words_p25"`
	WordsMedian int     `json:"words_median"`
	WordsP75    int     `json:"words_p75"`
	WordsMax    int     `json:"words_max"`
	WordsMean   float64 `json:"words_mean"`
	// DistinctShare is the share of sampled queries whose lower-cased word sequence is unique in
	// the sample (exact duplicates are already removed by the build's near-duplicate filter).
	DistinctShare float64 `json:"distinct_share"`
	// Ranked counts the items with a retriever rank; Top1 and Top5 the shares of those whose
	// intended tool the retriever ranks first and in the first five.
	Ranked int     `json:"ranked"`
	Top1   float64 `json:"retriever_top1"`
	Top5   float64 `json:"retriever_top5"`
	// On the labelled items: the person's precision where the judge says right, and the judge's
	// share of right among the items the person labelled wrong (how lenient the judge is).
	HumanRightWhereJudgeRight float64 `json:"human_right_where_judge_right"`
	JudgeRightWhereHumanWrong float64 `json:"judge_right_where_human_wrong"`
}

// ReadSynAudit reads a (possibly labelled) Syn audit CSV. A bad label or score is an error naming
// the line.
func ReadSynAudit(path string) (SynAuditSummary, error) {
	var s SynAuditSummary
	var words []int
	seen := map[string]int{}
	top1, top5 := 0, 0
	jr, jrHumanRight, humanWrong, humanWrongJudgeRight := 0, 0, 0, 0
	err := readCSV(path, []string{"query", "judge_keep", "human_label"}, func(_ int, cell func(string) string) error {
		if rk := strings.TrimSpace(cell("retriever_rank")); rk != "" {
			r, err := strconv.Atoi(rk)
			if err != nil || r < 1 {
				return fmt.Errorf("retriever_rank %q is not a positive integer", rk)
			}
			s.Ranked++
			if r == 1 {
				top1++
			}
			if r <= 5 {
				top5++
			}
		}
		s.Sampled++
		q := cell("query")
		words = append(words, WordCount(q))
		seen[strings.Join(wordTokens(q), " ")]++
		judge := strings.TrimSpace(cell("judge_keep"))
		switch judge {
		case "":
		case "0", "1":
			s.Judged++
			if judge == "1" {
				s.JudgeRight++
			}
		default:
			return fmt.Errorf("judge_keep %q is not 0, 1 or empty", judge)
		}
		lab := strings.TrimSpace(cell("human_label"))
		if lab == "" {
			return nil
		}
		human, ok := humanLabel(lab)
		if !ok {
			return fmt.Errorf("human_label %q is not 1/0, yes/no or true/false", lab)
		}
		s.Labelled++
		if human {
			s.HumanRight++
		}
		if judge != "" {
			s.JudgeHumanBoth++
			if (judge == "1") == human {
				s.JudgeHumanAgree++
			}
			if judge == "1" {
				jr++
				if human {
					jrHumanRight++
				}
			}
			if !human {
				humanWrong++
				if judge == "1" {
					humanWrongJudgeRight++
				}
			}
		}
		return nil
	})
	if err != nil {
		return s, err
	}
	if s.Judged > 0 {
		s.JudgePrecision = float64(s.JudgeRight) / float64(s.Judged)
	}
	if s.Labelled > 0 {
		s.HumanPrecision = float64(s.HumanRight) / float64(s.Labelled)
	}
	if s.JudgeHumanBoth > 0 {
		s.JudgeHumanRate = float64(s.JudgeHumanAgree) / float64(s.JudgeHumanBoth)
	}
	if jr > 0 {
		s.HumanRightWhereJudgeRight = float64(jrHumanRight) / float64(jr)
	}
	if humanWrong > 0 {
		s.JudgeRightWhereHumanWrong = float64(humanWrongJudgeRight) / float64(humanWrong)
	}
	if s.Ranked > 0 {
		s.Top1, s.Top5 = float64(top1)/float64(s.Ranked), float64(top5)/float64(s.Ranked)
	}
	if len(words) > 0 {
		sort.Ints(words)
		at := func(q float64) int { return words[int(q*float64(len(words)-1)+0.5)] }
		s.WordsMin, s.WordsP25, s.WordsMedian, s.WordsP75, s.WordsMax = words[0], at(0.25), at(0.5), at(0.75), words[len(words)-1]
		sum := 0
		for _, w := range words {
			sum += w
		}
		s.WordsMean = float64(sum) / float64(len(words))
		unique := 0
		for _, c := range seen {
			if c == 1 {
				unique++
			}
		}
		s.DistinctShare = float64(unique) / float64(len(words))
	}
	return s, nil
}
