//go:build !unix

package outdir

// mountPoint is false where devices cannot be compared; a mount point then fails at Commit.
func mountPoint(string) bool { return false }
