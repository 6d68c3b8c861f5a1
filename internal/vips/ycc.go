package vips

/*
#include <glib.h>
#include <stdlib.h>
#include "raster.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"
)

// YCC is a JPEG's pixels as the JPEG stores them: a luma plane and two
// chroma planes of half its width and height (YCbCr 4:2:0), each a 1-band
// Raster. Flips, right-angle turns, crops and blurs act on the planes as
// they would on the
// pixels, and the planes go back into a JPEG without chroma upsampling,
// colour conversion or downsampling: a fifth less work for such a chain on a
// 1080p frame, and the chroma is not resampled on the way through. The
// chroma stays aligned with the luma only while every size and crop offset
// is even; the caller keeps to that.
type YCC struct{ plane [3]*Raster }

// ErrNotYCC420 is DecodeYCC's answer for a JPEG laid out otherwise.
var ErrNotYCC420 = errors.New("raster: not a YCbCr 4:2:0 JPEG")

// YCC420 reports whether buf is a JPEG that DecodeYCC reads, and its size.
func YCC420(buf []byte) (w, h int, ok bool) {
	if !isJPEG(buf) || startup() != nil {
		return 0, 0, false
	}
	var r C.fl_raster
	var msg [200]C.char
	ok = C.fl_jpeg_header((*C.uint8_t)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &r, &msg[0], C.size_t(len(msg))) == 2
	return int(r.W), int(r.H), ok
}

// DecodeYCC decodes the first rows rows of a YCbCr 4:2:0 JPEG's planes (a
// window of each; all of them when rows covers the image), each row
// mirrored left-right when mirror is set.
func DecodeYCC(buf []byte, rows int, mirror bool) (*YCC, error) {
	if !isJPEG(buf) {
		return nil, ErrNotYCC420
	}
	if err := startup(); err != nil {
		return nil, err
	}
	var planes [3]C.fl_raster
	var mem [3]*C.uint8_t
	var msg [200]C.char
	m := C.int(0)
	if mirror {
		m = 1
	}
	rc := C.fl_jpeg_decode_ycc((*C.uint8_t)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), C.int(rows), m,
		&planes[0], &mem[0], &msg[0], C.size_t(len(msg)))
	runtime.KeepAlive(buf)
	switch rc {
	case 1:
		return nil, ErrNotYCC420
	case -1:
		return nil, fmt.Errorf("%w: %s", ErrDecode, C.GoString(&msg[0]))
	}
	var y YCC
	for k := range y.plane {
		y.plane[k] = own(unsafe.Pointer(mem[k]), planes[k])
	}
	return &y, nil
}

// Width and Height are the image's (the luma plane's).
func (y *YCC) Width() int  { return y.plane[0].Width() }
func (y *YCC) Height() int { return y.plane[0].Height() }

// Share is Raster.Share of every plane.
func (y *YCC) Share() *YCC {
	return &YCC{[3]*Raster{y.plane[0].Share(), y.plane[1].Share(), y.plane[2].Share()}}
}

// Close releases the planes.
func (y *YCC) Close() {
	for _, p := range y.plane {
		p.Close()
	}
}

// each applies op to every plane, the chroma ones with chroma set, and
// consumes y: on an error every plane is released.
func (y *YCC) each(op func(p *Raster, chroma bool) (*Raster, error)) (*YCC, error) {
	var out YCC
	var err error
	for k, p := range y.plane {
		if err != nil {
			p.Close()
			continue
		}
		out.plane[k], err = op(p, k > 0)
	}
	if err != nil {
		for _, p := range out.plane {
			p.Close()
		}
		return nil, err
	}
	return &out, nil
}

// Flip mirrors the image left-right, or top-bottom when vertical.
func (y *YCC) Flip(vertical bool) (*YCC, error) {
	return y.each(func(p *Raster, _ bool) (*Raster, error) { return p.Flip(vertical) })
}

// Rot turns the image clockwise by quarter * 90 degrees; the planes must be
// whole.
func (y *YCC) Rot(quarter int) (*YCC, error) {
	return y.each(func(p *Raster, _ bool) (*Raster, error) { return p.Rot(quarter) })
}

// Crop is Raster.Crop of the image; left, top, w and h must be even.
func (y *YCC) Crop(left, top, w, h int) (*YCC, error) {
	if left%2 != 0 || top%2 != 0 || w%2 != 0 || h%2 != 0 {
		y.Close()
		return nil, fmt.Errorf("raster: crop %dx%d+%d+%d of YCbCr 4:2:0 planes is not on even pixels", w, h, left, top)
	}
	return y.each(func(p *Raster, chroma bool) (*Raster, error) {
		if chroma {
			return p.Crop(left/2, top/2, w/2, h/2)
		}
		return p.Crop(left, top, w, h)
	})
}

// Blur is Raster.Blur of the image: sigma on the luma, half of it on the
// chroma, whose pixels are twice the size.
func (y *YCC) Blur(sigma float64) (*YCC, error) {
	return y.each(func(p *Raster, chroma bool) (*Raster, error) {
		if chroma {
			return p.Blur(sigma / 2)
		}
		return p.Blur(sigma)
	})
}

// Encode writes the planes, which must be whole, as a baseline 4:2:0 JPEG.
func (y *YCC) Encode(quality int) ([]byte, error) { return y.AppendEncode(nil, quality) }

// AppendEncode is Encode appending to dst, as Raster.AppendEncode.
func (y *YCC) AppendEncode(dst []byte, quality int) ([]byte, error) {
	var planes [3]C.fl_raster
	for k, p := range y.plane {
		if !p.whole() {
			return dst, fmt.Errorf("raster: encode of window %+v of a %dx%d plane", p.Window(), p.Width(), p.Height())
		}
		planes[k] = p.r
	}
	return appendJPEG(dst, func(into *C.uint8_t, room C.size_t, out **C.uint8_t, n *C.ulong, msg *C.char, msglen C.size_t) C.int {
		defer runtime.KeepAlive(y)
		return C.fl_jpeg_encode_ycc(&planes[0], C.int(quality), into, room, out, n, msg, msglen)
	})
}
