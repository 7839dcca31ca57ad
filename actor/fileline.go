package actor

import (
	"bufio"
	"errors"
	"io"
)

// A fileLine is one line of a dead-letter file, as scanLines reads it.
type fileLine struct {
	n    int    // its number, from 1
	off  int64  // where it starts in the file
	size int64  // its bytes in the file, newline included
	data []byte // the line without its newline, at most maxLine bytes of it; valid until the next line is read
	long bool   // longer than maxLine: data holds its start only
	cut  bool   // the file ends inside the line, which has no newline
}

// scanLines calls fn with each line that r holds, in order, until fn
// returns false. It holds at most maxLine bytes of a line in memory,
// however long the line, and returns the error that stopped the reading,
// if one did.
func scanLines(r io.Reader, fn func(*fileLine) bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	ln := fileLine{}
	var off int64
	for n := 1; ; n++ {
		buf = buf[:0]
		var size int64
		var cut bool
		for {
			chunk, err := br.ReadSlice('\n')
			size += int64(len(chunk))
			if room := maxLine + 1 - len(buf); room > 0 {
				buf = append(buf, chunk[:min(room, len(chunk))]...)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err == io.EOF {
				if size == 0 {
					return nil
				}
				cut = true
			} else if err != nil {
				return err
			}
			break
		}
		length := size // without the newline
		if !cut {
			length--
		}
		ln = fileLine{n: n, off: off, size: size, long: length > maxLine, cut: cut,
			data: buf[:min(length, int64(maxLine))]}
		if !fn(&ln) {
			return nil
		}
		off += size
	}
}
