package augment

import (
	"os"
	"runtime"
	"testing"
)

func BenchmarkParts(b *testing.B) {
	data := benchJPEG(b)
	parts := map[string][]Step{
		"none":   nil,
		"flip":   {{Type: FlipImage, Property: FlipHorizontal}},
		"blur":   {{Type: ImageBlur, Property: Blur, Value: 2}},
		"crop":   {{Type: Crop, Property: CropPercentage, Value: 80, X: 0.5, Y: 0.5}},
		"rotate": {{Type: ImageRotation, Property: PercentageScale, Value: 17}},
		"hue":    {{Type: Hue, Property: HueDegrees, Value: 30}},
		"noise":  {{Type: Noise, Property: NoisePercentage, Value: 5, Seed: 7}},
		"vflip":  {{Type: FlipImage, Property: FlipVertical}},
	}
	for _, name := range []string{"none", "flip", "vflip", "blur", "crop", "rotate", "hue", "noise"} {
		b.Run(name, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			c0 := cpuSeconds(b)
			for b.Loop() {
				if _, err := ApplySteps(b.Context(), data, nil, parts[name], Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuSeconds(b)-c0)*1000/float64(b.N), "cpu-ms/op")
		})
	}
}

func BenchmarkWriteFrame(b *testing.B) { os.WriteFile("/tmp/frame.jpg", benchJPEG(b), 0o644) }
