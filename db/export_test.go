package db

// Internals for the external tests (package db_test), which need dbtest.
var DecodeMembers = decodeMembers

const MemberFieldCount = memberFieldCount

// SetCollectMax bounds a collect past the walk budget at n matches, for
// one test; restore puts the bound back.
func SetCollectMax(n int) (restore func()) {
	old := collectMax
	collectMax = n
	return func() { collectMax = old }
}
