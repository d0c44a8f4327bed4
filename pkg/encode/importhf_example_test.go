package encode_test

import (
	"fmt"
	"testing/fstest"

	"github.com/rated-dev/rated/pkg/encode"
)

// The settings a sentence-transformers folder gives a model folder: a CLS-pooled encoder with a
// Normalize module and a 512-token limit.
func ExampleReadHFFolder() {
	folder := fstest.MapFS{
		"config.json":           {Data: []byte(`{"model_type": "bert", "hidden_size": 384, "max_position_embeddings": 512}`)},
		"tokenizer.json":        {Data: []byte(`{}`)},
		"onnx/model.onnx":       {Data: []byte("onnx bytes")},
		"modules.json":          {Data: []byte(`[{"path": "", "type": "sentence_transformers.models.Transformer"}, {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}, {"path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]`)},
		"1_Pooling/config.json": {Data: []byte(`{"word_embedding_dimension": 384, "pooling_mode_cls_token": true}`)},
	}
	m, err := encode.ReadHFFolder(folder, "")
	if err != nil {
		panic(err)
	}
	fmt.Println(m.ONNX, m.Pooling, m.Dim, m.MaxLength, m.Normalize)
	// Output: onnx/model.onnx cls 384 512 true
}
