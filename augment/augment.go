// Package augment parses, validates and applies framelake's augmentation
// configuration (docs/spec/interface.md 2.9) to images and their bounding boxes.
//
// A Config lists IMAGE_LEVEL entries; every selected entry contributes steps
// to each output, in the order the entries are listed, and an output applies
// all of them with parameters drawn at random from the configured ranges (as
// Roboflow does). One input gives as many outputs as the caller asks for
// (ApplyN); the dataset build asks for two per training frame. Every output
// carries the Steps that made it, and ApplySteps replays them exactly.
//
// Decisions where the interface is silent:
//
//   - Drawing: a range [min, max] gives a value drawn uniformly from the
//     closed interval and rounded to 0.01 (0.0001 for crop positions), so the
//     recorded Step is exactly what was applied. The random source for output
//     i of an image is math/rand/v2 PCG seeded with (seed, FNV-1a 64 of
//     Options.Key, NUL, decimal i): equal seed, key and configuration give
//     equal bytes, and images do not share random streams.
//   - FLIP_IMAGE: a property set to true always applies; both true flips both
//     ways. NINETY_ROTATION: with one option true it always applies; with
//     several, each output picks one of them uniformly.
//   - IMAGE_ROTATION.PERCENTAGE_SCALE is an angle range in degrees; positive
//     turns counter-clockwise (as Pillow and OpenCV do). The image turns about
//     its centre on a canvas of the input's size, without scaling: corners
//     that leave the canvas are cut, and uncovered canvas is filled black
//     (transparent black when the image has alpha). SHEAR_HORIZONTAL moves
//     rows sideways by tan(angle) times their distance below the centre,
//     SHEAR_VERTICAL moves columns down by tan(angle) times their distance
//     right of the centre; same canvas and fill as rotation. Interpolation is
//     bilinear, positions in 1/64 of a pixel (OpenCV uses 1/32).
//   - IMAGE_BLUR.BLUR is the Gaussian's standard deviation in pixels (what
//     Pillow calls radius), the kernel cut at three of them (as OpenCV's
//     GaussianBlur); below 0.05 the image is left as it is.
//   - GRAYSCALE_PERCENTAGE p blends p% of the Rec. 601 luma into each pixel.
//     SATURATION_DEGREES s scales colourfulness by 1+s/100 about that luma
//     (Pillow's ImageEnhance.Color); BRIGHTNESS_DEGREES b scales every channel
//     by 1+b/100 (ImageEnhance.Brightness); HUE_DEGREES h turns the HSV hue by
//     h degrees, keeping HSV value and saturation.
//   - NOISE_PERCENTAGE p replaces each pixel, with probability p%, by a colour
//     with independent uniform channels (not salt and pepper). Which pixels
//     and which colours depends only on the step's seed and the pixel's row
//     and column.
//   - CROP_PERCENTAGE p is the share of the image cut away, as in imgaug's
//     Crop(percent=...): p% of the width and p% of the height are removed
//     and the window left keeps (100-p)% of each (at least one pixel, two on
//     an even-sized image); 0 is no crop, [0, 20] cuts between 0 and 20
//     percent of each side's length. One value is drawn per output for both
//     axes, and the cut is split between the two opposite edges at random
//     (Step.X is the left edge's share of the horizontal cut, Step.Y the top
//     edge's of the vertical one). Unlike imgaug, whose percent is cut from
//     each of the four edges independently (so percent=0.2 can remove 40%
//     of a side), p is the total per axis, which keeps the interface's
//     0..100 range meaningful end to end; and the output keeps the window's
//     size (imgaug's keep_size=False) rather than being resized back, so
//     boxes are only shifted and clipped, never scaled. On an image of even
//     width and height, sizes and offsets round to even pixels, so a JPEG's
//     half-size chroma is cut where its samples meet.
//   - Boxes (pixels, top-left origin, edges: a box covering pixel columns
//     0..9 has X 0 and W 10) follow the pixels, as docs/spec/interface.md
//     2.9 leaves to us: exactly for flips, right angles and crop; rotation
//     and shear take the box enclosing the four moved corners. Each box is
//     clipped to the image, and the fraction of it still visible multiplies
//     along the chain; a box whose fraction falls below Options.MinVisible
//     (default 0.1) is dropped. Photometric steps keep boxes.
//   - Shapes (Box.Geometry, docs/shapes.md) move as box corners do: every
//     vertex of a polygon, polyline or keypoints through the step's map,
//     rotation and shear included, and each box out is its moved shape's
//     bounds (as the lake derives it), not the box of moved corners. A mask
//     is decoded to a bit plane once per chain and moved with the pixels:
//     exactly for flips, right angles and crops (the image's pixels go
//     where its bits go); for rotation and shear each output pixel takes the
//     bit under its centre mapped back through the inverse of the image's
//     map (nearest neighbour, where the image is bilinear: the two agree to
//     an IoU above 0.99 on a 320x240 ellipse). A crop, or a rotation or
//     shear pushing vertices off the canvas, clips polygons ring by ring
//     (Sutherland-Hodgman against the canvas: cut edges run along its
//     border; a ring with under 3 vertices left goes), cuts a polyline into
//     the pieces inside and keeps the longest (it stays one annotation),
//     makes keypoints outside the canvas unlabelled (v 0 at 0, 0, as COCO
//     writes them) and cuts masks. The visible fraction of a shape is what
//     it keeps of its area (polygon rings by the shoelace, mask pixels), its
//     length (polyline) or its labelled points (keypoints); a shape with
//     nothing left, or below Options.MinVisible, is dropped as boxes are.
//     Areas out are measured as the lake measures them (a polygon's pixels,
//     a mask's, keypoints' box; a polyline has none).
//   - A horizontal flip swaps keypoint names by the label's declared flip
//     pairs (Options.Skeletons; left_eye becomes right_eye), by COCO's
//     person's when the label declares none and every point has one of its
//     17 names; otherwise names stay. A vertical flip and the right-angle
//     turns keep names: the pairs name image sides left and right, which
//     a vertical flip does not exchange (Ultralytics' flipud and
//     albumentations' VerticalFlip keep them too; COCO only flips
//     horizontally).
//   - Output format: JPEG stays JPEG, PNG stays PNG, WebP stays WebP; other
//     inputs become PNG when they have alpha and JPEG otherwise; alpha written
//     to JPEG is laid over white. JPEG is written at Options.Quality
//     (default 90), baseline, 4:2:0. Metadata (EXIF orientation included) is
//     not copied, so pixels are shown as they are stored and boxes agree with
//     them.
//
// All work runs through internal/vips: one decode and one encode per chain
// (ApplyN decodes once for all its outputs), the steps on decoded pixels in
// memory (vips.Raster). JPEGs are decoded and encoded by libjpeg-turbo
// directly, other formats by libvips. When a chain's output is a crop,
// ApplySteps decodes only the part of the JPEG it reads (needed): same
// bytes out, less work. A chain of only flips, right-angle turns, crops and
// blurs from a YCbCr 4:2:0 JPEG to a JPEG, with every size and crop offset
// even (so each chroma sample stays over its 2 x 2 pixels), runs on the
// planes the JPEG stores (planar, vips.YCC): no chroma upsampling, colour
// conversion or downsampling, a blur of sigma on the luma and sigma/2 on
// the half-size chroma. Its pixels differ from the pixel path's by about
// half a level on average (the chroma is resampled once instead of three
// times), its boxes not at all; Apply, ApplyN and ApplySteps take the same
// path for the same steps, so the same seed still gives the same bytes. A
// chain keeps its goroutine on one OS thread, and Options.Buffer (or
// ApplyEach) lets a caller reuse one output buffer. Functions are safe for
// concurrent use.
package augment

import (
	"github.com/framelake/framelake/internal/vips"
	"github.com/framelake/framelake/lake/shape"
)

// Category is the only augmentation category the interface supports.
const Category = "IMAGE_LEVEL"

// Augmentation type ids.
const (
	FlipImage      = "FLIP_IMAGE"
	ImageRotation  = "IMAGE_ROTATION"
	ImageBlur      = "IMAGE_BLUR"
	NinetyRotation = "NINETY_ROTATION"
	Grayscale      = "GRAYSCALE"
	Hue            = "HUE"
	Saturation     = "SATURATION"
	Brightness     = "BRIGHTNESS"
	Noise          = "NOISE"
	Shear          = "SHEAR"
	Crop           = "CROP"
)

// Property ids.
const (
	FlipHorizontal      = "FLIP_HORIZONTAL"
	FlipVertical        = "FLIP_VERTICAL"
	PercentageScale     = "PERCENTAGE_SCALE"
	Blur                = "BLUR"
	Clockwise           = "CLOCKWISE"
	CounterClockwise    = "COUNTER_CLOCKWISE"
	UpsideDown          = "UPSIDE_DOWN"
	GrayscalePercentage = "GRAYSCALE_PERCENTAGE"
	HueDegrees          = "HUE_DEGREES"
	SaturationDegrees   = "SATURATION_DEGREES"
	BrightnessDegrees   = "BRIGHTNESS_DEGREES"
	NoisePercentage     = "NOISE_PERCENTAGE"
	ShearHorizontal     = "SHEAR_HORIZONTAL"
	ShearVertical       = "SHEAR_VERTICAL"
	CropPercentage      = "CROP_PERCENTAGE"
)

// Field is the request field configuration errors name.
const Field = "augmentation_list"

// DefaultMinVisible is the visible fraction below which a box is dropped.
const DefaultMinVisible = 0.1

// MaxPixels bounds the images augment accepts (width times height): a chain
// holds the decoded image in memory, 3 or 4 bytes a pixel, and a step that
// moves pixels (turn, rotation, shear, blur) a second copy while it runs.
const MaxPixels = 100_000_000

// DefaultQuality is the JPEG and WebP quality of outputs.
const DefaultQuality = 90

// Config is an augmentation configuration: {"IMAGE_LEVEL": [entries]}.
// Parse returns a validated one; a Config built in Go should be checked with
// Validate before use.
type Config struct {
	ImageLevel []Entry `json:"IMAGE_LEVEL"`
}

// Entry is one augmentation type with its properties.
type Entry struct {
	ID          string     `json:"id"`
	Description string     `json:"description,omitempty"`
	IsSelected  *bool      `json:"isSelected,omitempty"` // nil means selected
	Properties  []Property `json:"properties"`
}

// Property is one property of an entry. Values holds one boolean for the
// boolean properties (JSON true/false, or the strings "True"/"False") and two
// integers, minimum and maximum, for the range properties.
type Property struct {
	ID     string `json:"id"`
	Values []any  `json:"values"`
}

// Box is a labelled rectangle in pixels, top-left origin, X and Y its top-left
// corner; its JSON names are those of the REST API's boxes (label, x, y,
// width, height). ID is the caller's and is carried through untouched.
// Geometry, when it is a polygon, polyline, keypoints or mask, is the shape
// the box is the box of: it moves with the pixels, and the box out is the
// moved shape's (docs/shapes.md). A mask must be of the image's size.
type Box struct {
	ID    string  `json:"id,omitempty"`
	Label string  `json:"label"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	W     float64 `json:"width"`
	H     float64 `json:"height"`
	shape.Geometry
}

// Step is one applied operation with the parameters that made it: Type and
// Property as in the configuration, Value the drawn angle (degrees), blur
// sigma (pixels), percentage or shift (boolean properties leave it 0), X and
// Y the crop window's position as a fraction of the room left around it, Seed
// the noise seed.
type Step struct {
	Type     string  `json:"type"`
	Property string  `json:"property"`
	Value    float64 `json:"value,omitempty"`
	X        float64 `json:"x,omitempty"`
	Y        float64 `json:"y,omitempty"`
	Seed     uint64  `json:"seed,omitempty"`
}

// Options tune Apply, ApplyN and ApplySteps. The zero value is usable.
type Options struct {
	// Key names the image (its uniqueName in the lake) so that images of one
	// build get different draws from one seed.
	Key string
	// Format of the output: "jpeg", "png", "webp", or "" for the input's.
	Format string
	// Quality of JPEG and WebP output, 1..100; 0 means DefaultQuality.
	Quality int
	// MinVisible is the fraction of a box that must stay in the image for it
	// to be kept, in (0, 1]; 0 means DefaultMinVisible.
	MinVisible float64
	// Buffer, when its capacity holds the encoded image, is where Apply and
	// ApplySteps write it: Output.Image is then Buffer[:n]. A caller that
	// writes each output away before the next reuses one buffer and touches
	// no new memory per image (a new buffer of a 1080p JPEG costs page
	// faults, about a tenth of the chain on a VM). ApplyN, whose outputs
	// live together, gives each its own memory. Concurrent calls need
	// buffers of their own.
	Buffer []byte
	// Skeletons are the keypoints labels' declarations, by label: a
	// horizontal flip swaps the names of their flip pairs. A label missing
	// here whose points all have COCO person names flips as
	// shape.COCOPerson; any other keeps its names.
	Skeletons map[string]*shape.Skeleton
}

// Output is one augmented image.
type Output struct {
	Image  []byte `json:"-"`
	Format string `json:"format"` // jpeg, png or webp
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Boxes  []Box  `json:"boxes"` // kept boxes, in input order
	Steps  []Step `json:"steps"`
}

// ErrDecode is wrapped by failures to read the input image.
var ErrDecode = vips.ErrDecode
