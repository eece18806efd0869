package genl

import "testing"

// TestDirections: every direction's wire number, its name, and the name
// parsed back; an unknown name is refused with the four valid ones.
func TestDirections(t *testing.T) {
	want := []struct {
		d    Direction
		v    uint32
		name string
	}{
		{DirToDevice, 1, "to-device"},
		{DirToCPU, 2, "to-cpu"},
		{DirBidirectional, 3, "bidirectional"},
		{DirInbound, 4, "inbound"},
	}
	ds := Directions()
	if len(ds) != len(want) {
		t.Fatalf("Directions() = %v, want %d of them", ds, len(want))
	}
	for i, w := range want {
		if ds[i] != w.d || uint32(w.d) != w.v || w.d.String() != w.name {
			t.Errorf("direction %d: %d %q, want %d %q", i, uint32(ds[i]), ds[i].String(), w.v, w.name)
		}
		if d, err := ParseDirection(w.name); err != nil || d != w.d {
			t.Errorf("ParseDirection(%q) = %d, %v; want %d", w.name, d, err, w.v)
		}
	}
	if s := Direction(5).String(); s != "dir-5" {
		t.Errorf("Direction(5) = %q, want dir-5", s)
	}
	if s := DirectionNames(); s != "to-device, to-cpu, bidirectional or inbound" {
		t.Errorf("DirectionNames() = %q", s)
	}
	for _, bad := range []string{"", "up", "Inbound", "dir-4", "4"} {
		d, err := ParseDirection(bad)
		want := `unknown sync direction "` + bad + `" (want to-device, to-cpu, bidirectional or inbound)`
		if err == nil || err.Error() != want || d != 0 {
			t.Errorf("ParseDirection(%q) = %d, %v; want %s", bad, d, err, want)
		}
	}
}
