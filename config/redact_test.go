package config

import "testing"

// TestRedact: no secret of a URL reaches a log line, and the rest stays
// as written.
func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://user:secret@central.example.com/v1", "https://user:xxxxx@central.example.com/v1"},
		{"https://user:p@ss@central.example.com", "https://user:xxxxx@central.example.com"},
		{"redis://:p4ss@127.0.0.1:6379/0", "redis://:xxxxx@127.0.0.1:6379/0"},
		{"postgres://postgres:pw@127.0.0.1:5432/cnpjgraph?sslmode=disable&password=pw", "postgres://postgres:xxxxx@127.0.0.1:5432/cnpjgraph?sslmode=disable&password=xxxxx"},
		{"postgres://postgres@127.0.0.1:5432/cnpjgraph?sslmode=disable", "postgres://postgres@127.0.0.1:5432/cnpjgraph?sslmode=disable"},
		{"https://tiles.example.com/{z}/{x}/{y}.png?apikey=K", "https://tiles.example.com/{z}/{x}/{y}.png?apikey=xxxxx"},
		{"https://maps.example.com/streetview?size={width}x{height}&key=K&signature=S#f", "https://maps.example.com/streetview?size={width}x{height}&key=xxxxx&signature=xxxxx#f"},
		{"https://nominatim.example.com/search?access_token=T&format=json", "https://nominatim.example.com/search?access_token=xxxxx&format=json"},
		{"http://a b:c@x/%zz", "http://xxxxx@x/%zz"}, // does not parse
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
