package retrieve

import (
	"fmt"

	"github.com/rated-dev/rated/pkg/provenance"
)

// EncoderIdentity names the endpoint and model for the outputs' provenance (an API encoder has
// no file digest; its URL and model name identify it).
func (e *EmbeddingsEndpoint) EncoderIdentity() provenance.Encoder {
	return provenance.Encoder{Name: e.Name(), URL: e.url,
		Settings: fmt.Sprintf("query_prefix=%q doc_prefix=%q", e.cfg.QueryPrefix, e.cfg.DocPrefix)}
}

// EncoderIdentity is the identity of the encoder behind the dense retriever.
func (m *Dense) EncoderIdentity() provenance.Encoder {
	if e := provenance.EncoderOf(m.enc); e != nil {
		return *e
	}
	return provenance.Encoder{Name: m.enc.Name()}
}
