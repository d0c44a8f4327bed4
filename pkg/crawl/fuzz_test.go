package crawl

import "testing"

// FuzzParsePython: any input either parses or returns an error; it never panics or hangs.
func FuzzParsePython(f *testing.F) {
	for _, seed := range []string{
		"class A(B):\n    name: str = 'x'\n    description = (\"a\" \"b\")\n",
		"x = f'{a}' + \"b\"\nfrom .m import (a as b,\n c)\n",
		"def f(a, b=1, *c, **d) -> int:\n    \"\"\"doc\"\"\"\n    return {'mode': 'x', 'name': y}\n",
		"class A:\n  if x:\n    y = 1\n  else:\n    y = 2\n",
		"x = '''unterminated\n", "(\n", "class\n", "def f(\n", "@\n", "x = {", "x: int", "EnvVar(",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		m, err := parsePython("f.py", "pkg.f", false, src)
		if err == nil && m == nil {
			t.Fatal("nil module without error")
		}
	})
}
