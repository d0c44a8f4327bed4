package encode

import (
	"fmt"
	"path/filepath"

	"github.com/rated-dev/rated/pkg/provenance"
)

// EncoderIdentity says which model folder, files and settings this Model runs: the encoder digest
// that outputs record (provenance.Encoder).
func (m *Model) EncoderIdentity() provenance.Encoder {
	id := provenance.Encoder{Name: m.cfg.Name, Dir: m.dir}
	if abs, err := filepath.Abs(m.dir); err == nil {
		id.Dir = abs
	}
	seen := map[*session]bool{}
	first := ""
	for _, name := range []string{TowerQuery, TowerDoc} {
		t := m.towers[name]
		if t == nil {
			continue
		}
		if first == "" {
			first = name
		}
		if !seen[t.sess] {
			seen[t.sess] = true
			id.ModelSHA256 = append(id.ModelSHA256, t.sess.sha256)
		}
	}
	if first != "" {
		// Hashed when the folder was opened (verification or cache key), so this is a lookup.
		if sum, err := m.opts.Runtime.digests.sum(filepath.Join(m.dir, m.cfg.TowerTokenizer(first)), nil); err == nil {
			id.TokenizerSHA256 = sum
		}
	}
	c := m.cfg
	id.Settings = fmt.Sprintf("pooling=%s normalize=%v max_length=%d query_prefix=%q doc_prefix=%q", c.Pooling, c.NormalizeEnabled(), c.MaxLength, c.QueryPrefix, c.DocPrefix)
	return id
}
