// tests/gonames/cgohot: a cgo program (dynamically linked, so memwatch's
// library is preloaded) that spends its time in one Go function, hotLoop,
// on the lines marked HOT; test_gonames.sh records it and checks that the
// report names main.hotLoop with one of those lines.
package main

// static long twice(long x) { return 2 * x; }
import "C"

import (
	"fmt"
	"os"
	"strconv"
)

//go:noinline
func hotLoop(a []float64, n int) float64 {
	s := 0.0
	for r := 0; r < n; r++ { // HOT
		for i := range a { // HOT
			s += a[i]*1.5 + float64(r) // HOT
		}
	}
	return s
}

func main() {
	n := 200
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	a := make([]float64, 1<<20)
	fmt.Println(hotLoop(a, n), C.twice(2))
}
