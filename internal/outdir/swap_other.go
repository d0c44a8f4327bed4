//go:build !linux

package outdir

// swap puts stage in the place of final with two renames (final is briefly absent; a kill in
// between leaves the earlier set as .NAME.old-*, removed by the next Begin).
func swap(stage, final string) (string, error) { return swapByRenames(stage, final) }
