package propagate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// scene draws a 40x30 textured object at (x, y) on a noisy 320x240 background.
func scene(tex []byte, x, y float64, rng *rand.Rand) Gray {
	g := Gray{W: 320, H: 240, Pix: make([]byte, 320*240)}
	for i := range g.Pix {
		g.Pix[i] = byte(100 + rng.IntN(20))
	}
	for j := range 30 {
		for i := range 40 {
			px, py := int(math.Round(x))+i, int(math.Round(y))+j
			if px >= 0 && py >= 0 && px < g.W && py < g.H {
				g.Pix[py*g.W+px] = tex[j*40+i]
			}
		}
	}
	return g
}

// smoothTexture is an object's look: random shades on a 10x8 grid blended
// over 40x30 pixels, as a surface is smoother than pixel noise.
func smoothTexture(rng *rand.Rand) []byte {
	var grid [9][11]float64
	for j := range grid {
		for i := range grid[j] {
			grid[j][i] = float64(rng.IntN(256))
		}
	}
	tex := make([]byte, 40*30)
	for y := range 30 {
		for x := range 40 {
			gx, gy := float64(x)/4, float64(y)/4
			i, j := int(gx), int(gy)
			fx, fy := gx-float64(i), gy-float64(j)
			v := grid[j][i]*(1-fx)*(1-fy) + grid[j][i+1]*fx*(1-fy) + grid[j+1][i]*(1-fx)*fy + grid[j+1][i+1]*fx*fy
			tex[y*40+x] = byte(v)
		}
	}
	return tex
}

// The tracker follows a textured object moving 3 px a frame right and 1
// down over noise, to within a pixel, and says it is sure; when the object
// is gone its score falls.
func TestNCCFollows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tex := smoothTexture(rng)
	tr := newNCC(scene(tex, 50, 60, rng), Box{CX: 70, CY: 75, W: 40, H: 30})
	for f := 1; f <= 40; f++ {
		x, y := 50+3*float64(f), 60+float64(f)
		b, score := tr.step(scene(tex, x, y, rng))
		// Within a template pixel (40/32 px): matching is on the template's grid.
		if math.Abs(b.CX-(x+20)) > 1.3 || math.Abs(b.CY-(y+15)) > 1.3 || math.Abs(b.W-40) > 4 || score < 0.8 {
			t.Fatalf("frame %d: box %+v score %.2f, want centre (%v, %v)", f, b, score, x+20, y+15)
		}
	}
	blank := Gray{W: 320, H: 240, Pix: make([]byte, 320*240)}
	for i := range blank.Pix {
		blank.Pix[i] = byte(100 + rng.IntN(20))
	}
	if _, score := tr.step(blank); score > 0.5 {
		t.Errorf("with the object gone the score is %.2f", score)
	}
}

// BenchmarkNCCStep is one tracking step on a 640x360 frame (issue 34:
// propagation of one box on 720p at 25 frames/s or more; frames are
// tracked at 640 wide).
func BenchmarkNCCStep(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	tex := make([]byte, 40*30)
	for i := range tex {
		tex[i] = byte(rng.IntN(256))
	}
	g := scene(tex, 50, 60, rng)
	tr := newNCC(g, Box{CX: 70, CY: 75, W: 80, H: 60})
	for b.Loop() {
		tr.step(g)
	}
}
