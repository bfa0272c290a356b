// tests/gonames/loop: a pure Go program (statically linked) that spends its
// time in one Go function, hotLoop, on the lines marked HOT, for the number
// of passes over 8 MiB its argument gives. test_gonames.sh builds it
// stripped (-ldflags='-s -w'), records it with memwatch record (a static
// program: sampled from outside) and checks that the report names
// main.hotLoop at one of those lines, and every name against the symbols of
// the unstripped build.
package main

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
			a[i] = a[i]*1.0000001 + 1e-9 // HOT
			s += a[i]                    // HOT
		}
	}
	return s
}

func main() {
	n := 100
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	a := make([]float64, 1<<20)
	fmt.Println(hotLoop(a, n))
}
