// tests/gonames/hot: a pure Go program whose functions, files and lines
// test_gonames.sh compares between Go's own tools (on the unstripped build)
// and memwatch's symbolizer (on the build stripped with -ldflags='-s -w').
// scale is inlined into hotLoop (its line is marked INL below).
package main

import (
	"fmt"
	"os"
)

func scale(x float64) float64 {
	return x*1.5 + 0.25 // INL
}

//go:noinline
func hotLoop(a []float64, n int) float64 {
	s := 0.0
	for r := 0; r < n; r++ {
		for i := range a {
			s += scale(a[i]) // CALL
		}
	}
	return s
}

//go:noinline
func coldPath(x int) int {
	m := map[int]int{}
	for i := 0; i < x; i++ {
		m[i] = i * i
	}
	return len(m)
}

func main() {
	a := make([]float64, 1<<12)
	fmt.Println(hotLoop(a, 4), coldPath(len(os.Args)))
}
