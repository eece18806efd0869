package genl

import (
	"slices"
	"testing"
)

// TestClientFlagsNames: each IB_SYNC_MEM_CLIENT_F_* bit by its name, in
// bit order, unknown bits as one hexadecimal number.
func TestClientFlagsNames(t *testing.T) {
	for _, tt := range []struct {
		f    ClientFlags
		want []string
	}{
		{0, []string{}},
		{FlagLazy, []string{"lazy"}},
		{FlagOwned, []string{"owned"}},
		{FlagFile, []string{"file"}},
		{FlagLazy | FlagFile, []string{"lazy", "file"}},
		{FlagLazy | FlagOwned | FlagFile | 1<<3 | 1<<31, []string{"lazy", "owned", "file", "0x80000008"}},
	} {
		if got := tt.f.Names(); !slices.Equal(got, tt.want) {
			t.Errorf("ClientFlags(%#x).Names() = %q, want %q", uint32(tt.f), got, tt.want)
		}
	}
	if s := (FlagLazy | FlagFile).String(); s != "lazy,file" {
		t.Errorf("String() = %q, want \"lazy,file\"", s)
	}
}
