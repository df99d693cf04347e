package words

import (
	"slices"
	"testing"
)

func TestOf(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"SERVIÇO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO)", []string{"servico", "federal", "de", "processamento", "dados", "serpro"}},
		{"  Açaí & Cia. Ltda-ME ", []string{"acai", "cia", "ltda", "me"}},
		{"JOSÉ DA SILVA 123", []string{"jose", "da", "silva", "123"}},
		{"", nil},
		{"--", nil},
		{"ÀÉÎÕÜ", []string{"aeiou"}},
		{"a×b", []string{"a", "b"}},
		{"日本 abc", []string{"abc"}},
	} {
		if got := Of(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Of(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The importer's array literal holds exactly the words Of finds.
func TestAppendArray(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SERVIÇO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO)", `{"servico","federal","de","processamento","dados","serpro"}`},
		{"DE DE DE", `{"de"}`},
		{"A B A C B", `{"a","b","c"}`},
		{"NULL", `{"null"}`},
		{"  ", ""},
		{"", ""},
		{"X", `{"x"}`},
		{"日本 abc 日本", `{"abc"}`},
	} {
		got, sig, ok := AppendArray([]byte("prefix"), []byte(c.in))
		if sig != Signature(Of(c.in)) {
			t.Errorf("AppendArray(%q): signature %x, want Signature's %x", c.in, sig, Signature(Of(c.in)))
		}
		if ok != (c.want != "") || string(got) != "prefix"+c.want {
			t.Errorf("AppendArray(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
}

func FuzzAppendArray(f *testing.F) {
	f.Add("SERVIÇO FEDERAL DE PROCESSAMENTO DE DADOS")
	f.Add("a a b")
	f.Fuzz(func(t *testing.T, s string) {
		got, sig, ok := AppendArray(nil, []byte(s))
		want := Of(s)
		if sig != Signature(want) {
			t.Fatalf("%q: signature %x, want %x", s, sig, Signature(want))
		}
		if ok != (len(want) > 0) {
			t.Fatalf("%q: ok %v, words %q", s, ok, want)
		}
		if !ok {
			return
		}
		lit := "{"
		for i, w := range want {
			if i > 0 {
				lit += ","
			}
			lit += `"` + w + `"`
		}
		lit += "}"
		if string(got) != lit {
			t.Fatalf("%q: %s, want %s", s, got, lit)
		}
	})
}

func TestUpper(t *testing.T) {
	for in, want := range map[string]string{" Rua São João, 12 ": "RUA SAO JOAO, 12", "açaí": "ACAI", "": "", "x×y": "X×Y"} {
		if got := Upper(in); got != want {
			t.Errorf("Upper(%q) = %q, want %q", in, got, want)
		}
	}
}
