package db

// Internals for the external tests (package db_test), which need dbtest.
var DecodeMembers = decodeMembers

const MemberFieldCount = memberFieldCount
