// Package listfile renders the files of a list export, as CNPJá's list
// exports offer them: an EXCEL workbook (one row per office, one per member)
// and a JSON_ZIP archive (each office's lookup answer as its own file).
// Both writers stream, since a list holds up to 1,000,000 offices: rows go
// out as they are added and are never all held in memory.
package listfile

// Content types of the two files, for the download's Content-Type.
const (
	ExcelContentType = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	ZipContentType   = "application/zip"
)
