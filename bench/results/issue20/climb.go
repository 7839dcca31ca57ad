//go:build ignore

// climb follows the calls from one function of a package, depth first in
// source order, each function once, and prints the file of each function
// it enters. A stay is a run of consecutive functions in one file; a climb
// back is a stay in a file already stayed in before. Issue 20 counted the
// root package's take with it, from the repository root:
//
//	go run bench/results/issue20/climb.go -dir . -skip slot.go,slotmoves.go
//	go run bench/results/issue20/climb.go -dir . -edges acquire.go,release.go
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	dir := flag.String("dir", ".", "package dir")
	start := flag.String("from", "core.acquire", "Type.method or func")
	skip := flag.String("skip", "", "comma-separated files not counted (e.g. slot.go)")
	verbose := flag.Bool("v", false, "print the walk")
	edges := flag.String("edges", "", "print calls between these two files (a.go,b.go) and exit")
	flag.Parse()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, *dir, func(fi os.FileInfo) bool {
		ok, _ := build.Default.MatchFile(*dir, fi.Name())
		return ok && !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		panic(err)
	}
	var files []*ast.File
	for _, p := range pkgs {
		for _, f := range p.Files {
			files = append(files, f)
		}
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	_, err = conf.Check("p", fset, files, info)
	if err != nil {
		panic(err)
	}
	decls := map[*types.Func]*ast.FuncDecl{}
	var startFn *types.Func
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			fn := info.Defs[fd.Name].(*types.Func)
			decls[fn] = fd
			name := fd.Name.Name
			if fd.Recv != nil {
				t := fd.Recv.List[0].Type
				if s, ok := t.(*ast.StarExpr); ok {
					t = s.X
				}
				if ix, ok := t.(*ast.IndexExpr); ok {
					t = ix.X
				}
				name = t.(*ast.Ident).Name + "." + name
			}
			if name == *start {
				startFn = fn
			}
		}
	}
	skipped := map[string]bool{}
	for _, s := range strings.Split(*skip, ",") {
		if s != "" {
			skipped[s] = true
		}
	}
	if *edges != "" {
		ab := strings.Split(*edges, ",")
		fileOf := func(fn *types.Func) string {
			fd := decls[fn.Origin()]
			if fd == nil {
				return ""
			}
			return filepath.Base(fset.Position(fd.Pos()).Filename)
		}
		n := 0
		for fn, fd := range decls {
			from := fileOf(fn)
			ast.Inspect(fd.Body, func(nd ast.Node) bool {
				if c, ok := nd.(*ast.CallExpr); ok {
					var id *ast.Ident
					switch f := c.Fun.(type) {
					case *ast.Ident:
						id = f
					case *ast.SelectorExpr:
						id = f.Sel
					}
					if id != nil {
						if g, ok := info.Uses[id].(*types.Func); ok {
							to := fileOf(g)
							if (from == ab[0] && to == ab[1]) || (from == ab[1] && to == ab[0]) {
								fmt.Printf("%s %s -> %s %s\n", from, fd.Name.Name, to, g.Name())
								n++
							}
						}
					}
				}
				return true
			})
		}
		fmt.Println(n, "calls")
		return
	}
	seen := map[*types.Func]bool{}
	var stays []string
	var walk func(fn *types.Func, depth int)
	walk = func(fn *types.Func, depth int) {
		if fn.Origin() != fn {
			fn = fn.Origin()
		}
		fd := decls[fn]
		if fd == nil || seen[fn] {
			return
		}
		seen[fn] = true
		file := filepath.Base(fset.Position(fd.Pos()).Filename)
		if !skipped[file] {
			if len(stays) == 0 || stays[len(stays)-1] != file {
				stays = append(stays, file)
			}
			if *verbose {
				fmt.Printf("%s%s (%s)\n", strings.Repeat("  ", depth), fd.Name.Name, file)
			}
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			var id *ast.Ident
			switch x := n.(type) {
			case *ast.CallExpr:
				switch f := x.Fun.(type) {
				case *ast.Ident:
					id = f
				case *ast.SelectorExpr:
					id = f.Sel
				case *ast.IndexExpr:
					if i, ok := f.X.(*ast.Ident); ok {
						id = i
					}
				}
			}
			if id != nil {
				if g, ok := info.Uses[id].(*types.Func); ok {
					walk(g, depth+1)
				}
			}
			return true
		})
	}
	if startFn == nil {
		panic("no " + *start)
	}
	walk(startFn, 0)
	distinct := map[string]bool{}
	for _, s := range stays {
		distinct[s] = true
	}
	var ds []string
	for d := range distinct {
		ds = append(ds, d)
	}
	sort.Strings(ds)
	fmt.Println("stays:", strings.Join(stays, " > "))
	fmt.Printf("%d files (%s), %d stays, %d climbs back\n", len(distinct), strings.Join(ds, " "), len(stays), len(stays)-len(distinct))
}
