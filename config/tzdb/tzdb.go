// Package tzdb is the IANA time zone database pushform reads local times
// with, embedded in the binary: the zoneinfo.zip Go ships in
// $GOROOT/lib/time (the data time/tzdata is generated from), loaded with
// time.LoadLocationFromTZData. time.LoadLocation would prefer the
// ZONEINFO environment variable and the machine's /usr/share/zoneinfo,
// and time/tzdata offers no way to ask it alone, so a deliver_at_local
// would fall due at other times on other machines; from here it cannot.
//
// go generate copies the archive of the Go toolchain in use;
// TestSameAsToolchain says when it differs.
package tzdb

//go:generate sh -c "cp \"$(go env GOROOT)/lib/time/zoneinfo.zip\" zoneinfo.zip"

import (
	"archive/zip"
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

//go:embed zoneinfo.zip
var archive string

// refused are names the archive holds, or time.LoadLocation accepts,
// that are no place: "Factory" (a zone for machines not yet set up),
// "posixrules" and "localtime" (files of a system's zoneinfo directory),
// and "Local" (the machine's own zone).
var refused = map[string]bool{"Factory": true, "posixrules": true, "localtime": true, "Local": true}

// db is the archive's index: each zone's TZif data by name, and the
// names in order.
type db struct {
	data  map[string]string
	names []string
	err   error
}

// open indexes the archive once; its entries are stored uncompressed
// (as Go writes it), so each zone's data is a slice of the archive.
var open = sync.OnceValue(func() *db {
	d := &db{data: map[string]string{}}
	r, err := zip.NewReader(strings.NewReader(archive), int64(len(archive)))
	if err != nil {
		d.err = fmt.Errorf("the embedded zone database: %w", err)
		return d
	}
	for _, f := range r.File {
		if strings.HasSuffix(f.Name, "/") || refused[f.Name] {
			continue
		}
		off, err := f.DataOffset()
		if err != nil || f.Method != zip.Store || off+int64(f.UncompressedSize64) > int64(len(archive)) {
			d.err = fmt.Errorf("the embedded zone database: entry %s is not stored whole", f.Name)
			return d
		}
		d.data[f.Name] = archive[off : off+int64(f.UncompressedSize64)]
		d.names = append(d.names, f.Name)
	}
	slices.Sort(d.names)
	return d
})

// Names lists the zone names Load accepts: the database's zones and
// links, sorted.
func Names() []string {
	return slices.Clone(open().names)
}

// Load returns the zone called name, from the embedded database only.
// "UTC" is time.UTC, as time.LoadLocation has it.
func Load(name string) (*time.Location, error) {
	d := open()
	if d.err != nil {
		return nil, d.err
	}
	if name == "UTC" {
		return time.UTC, nil
	}
	data, ok := d.data[name]
	if !ok {
		return nil, fmt.Errorf("unknown time zone %q", name)
	}
	return time.LoadLocationFromTZData(name, []byte(data))
}
