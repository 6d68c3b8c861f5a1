// JPEG in and out through libjpeg-turbo directly, for rasters. libvips uses
// the same library; calling it here skips libvips' buffer source, its
// pipeline and its write-behind sink, which cost as much again as the codec on
// a 1080p frame, and lets a chain that ends in a crop decode only the rows and
// columns it keeps.
#include <glib.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

#include "raster.h"

// A libjpeg error (or a warning that means damaged data) jumps back to the
// call that started the work, with the library's message in msg.
typedef struct {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	char msg[JMSG_LENGTH_MAX];
} fl_jerr;

static void on_error(j_common_ptr c) {
	fl_jerr *e = (fl_jerr *)c->err;
	(*c->err->format_message)(c, e->msg);
	longjmp(e->jump, 1);
}

// on_message fails on warnings that mean the pixels are wrong (truncated or
// corrupt data) and ignores the rest: stray bytes before a marker, which some
// cameras write, and trace messages.
static void on_message(j_common_ptr c, int level) {
	if (level >= 0 || c->err->msg_code == JWRN_EXTRANEOUS_DATA) return;
	on_error(c);
}

static void init_err(fl_jerr *e) {
	jpeg_std_error(&e->pub);
	e->pub.error_exit = on_error;
	e->pub.emit_message = on_message;
	e->msg[0] = 0;
}

static void set_err(char *err, size_t errlen, const char *msg) { g_strlcpy(err, msg, errlen); }

static int is_ycc420(const struct jpeg_decompress_struct *d) {
	const jpeg_component_info *c = d->comp_info;
	return d->jpeg_color_space == JCS_YCbCr && d->num_components == 3 && c[0].h_samp_factor == 2 && c[0].v_samp_factor == 2 &&
	       c[1].h_samp_factor == 1 && c[1].v_samp_factor == 1 && c[2].h_samp_factor == 1 && c[2].v_samp_factor == 1;
}

int fl_jpeg_header(const uint8_t *buf, size_t len, fl_raster *out, char *err, size_t errlen) {
	struct jpeg_decompress_struct d;
	fl_jerr e;
	init_err(&e);
	d.err = &e.pub;
	jpeg_create_decompress(&d);
	if (setjmp(e.jump)) {
		set_err(err, errlen, e.msg);
		jpeg_destroy_decompress(&d);
		return -1;
	}
	jpeg_mem_src(&d, buf, len);
	jpeg_read_header(&d, TRUE);
	int ok = is_ycc420(&d) ? 2 : d.jpeg_color_space == JCS_YCbCr || d.jpeg_color_space == JCS_GRAYSCALE || d.jpeg_color_space == JCS_RGB;
	out->W = d.image_width;
	out->H = d.image_height;
	out->bands = 3;
	jpeg_destroy_decompress(&d);
	return ok;
}

int fl_jpeg_decode(const uint8_t *buf, size_t len, fl_raster *out, int mirror, uint8_t **mem, char *err, size_t errlen) {
	struct jpeg_decompress_struct d;
	fl_jerr e;
	uint8_t *volatile px = NULL;
	init_err(&e);
	d.err = &e.pub;
	jpeg_create_decompress(&d);
	if (setjmp(e.jump)) {
		set_err(err, errlen, e.msg);
		jpeg_destroy_decompress(&d);
		g_free(px);
		return -1;
	}
	jpeg_mem_src(&d, buf, len);
	jpeg_read_header(&d, TRUE);
	d.out_color_space = JCS_RGB;
	jpeg_start_decompress(&d);
	// Columns come in whole iMCUs; decode one more pixel each side where the
	// window does not reach the edge, since libjpeg-turbo upsamples chroma at
	// a cropped edge from that edge alone and its last column can differ.
	JDIMENSION x0 = out->x > 0 ? out->x - 1 : 0;
	JDIMENSION x1 = out->x + out->w < out->W ? out->x + out->w + 1 : out->W;
	// And at least 8 columns: libjpeg-turbo upsamples chroma plainly, not
	// fancily, when a row of it is 2 samples or fewer.
	if (x1 - x0 < 8) {
		x1 = x0 + 8 < (JDIMENSION)out->W ? x0 + 8 : (JDIMENSION)out->W;
		x0 = x1 > 8 ? x1 - 8 : 0;
	}
	JDIMENSION cx = x0, cw = x1 - x0;
	if (cx > 0 || cw < d.output_width) jpeg_crop_scanline(&d, &cx, &cw);
	size_t rowlen = (size_t)cw * 3;
	px = g_try_malloc(rowlen * out->h);
	if (!px) {
		set_err(err, errlen, "out of memory");
		jpeg_destroy_decompress(&d);
		return -1;
	}
	if (out->y > 0) jpeg_skip_scanlines(&d, out->y);
	// A mirror goes strip by strip, while the rows are still in cache: done
	// afterwards, it reads the whole image back from memory.
	fl_raster strip = *out;
	strip.px = px + (size_t)(out->x - cx) * 3;
	strip.stride = rowlen;
	for (int y = 0; y < out->h;) {
		JSAMPROW rows[16];
		int n = out->h - y < 16 ? out->h - y : 16;
		for (int k = 0; k < n; k++) rows[k] = px + (size_t)(y + k) * rowlen;
		n = (int)jpeg_read_scanlines(&d, rows, n);
		if (mirror) {
			strip.h = n;
			fl_flip(&strip, &strip, 0);
			strip.px += (size_t)n * rowlen;
		}
		y += n;
	}
	if (d.output_scanline == d.output_height)
		jpeg_finish_decompress(&d); // reads to the end, so truncation shows
	jpeg_destroy_decompress(&d);
	*mem = px;
	out->stride = rowlen;
	out->px = px + (size_t)(out->x - cx) * 3;
	return 0;
}

// fl_jpeg_check reads the header into out (W, H, bands) and, when W x H is
// at most max_pixels, decodes every scan at 1/8 scale: the entropy-coded data
// is all read, as a full decode reads it, but the inverse DCT is one
// coefficient a block and nothing is upsampled, so damaged data fails here at
// a fraction of a decode's cost, with the warnings fl_jpeg_decode fails on.
// Returns 0, 1 when the image is over max_pixels (nothing decoded), or -1
// with err set.
int fl_jpeg_check(const uint8_t *buf, size_t len, long long max_pixels, fl_raster *out, char *err, size_t errlen) {
	struct jpeg_decompress_struct d;
	fl_jerr e;
	uint8_t *volatile row = NULL;
	init_err(&e);
	d.err = &e.pub;
	jpeg_create_decompress(&d);
	if (setjmp(e.jump)) {
		set_err(err, errlen, e.msg);
		jpeg_destroy_decompress(&d);
		g_free(row);
		return -1;
	}
	jpeg_mem_src(&d, buf, len);
	jpeg_read_header(&d, TRUE);
	out->W = d.image_width;
	out->H = d.image_height;
	out->bands = d.num_components;
	if ((long long)d.image_width * d.image_height > max_pixels) {
		jpeg_destroy_decompress(&d);
		return 1;
	}
	d.scale_num = 1;
	d.scale_denom = 8;
	d.dct_method = JDCT_IFAST;
	d.do_fancy_upsampling = FALSE;
	jpeg_start_decompress(&d);
	row = g_malloc((size_t)d.output_width * d.output_components);
	JSAMPROW rows[1] = {row};
	while (d.output_scanline < d.output_height) jpeg_read_scanlines(&d, rows, 1);
	jpeg_finish_decompress(&d); // reads to the end, so truncation shows
	jpeg_destroy_decompress(&d);
	g_free(row);
	return 0;
}

// membuf is a JPEG destination that starts in the caller's memory (room
// bytes at into, often reused from one image to the next, so no page of it
// is new) and moves to its own, doubling, when that is full. libjpeg's own
// memory destination swaps buffers as it grows and frees only those it
// made, so after an error the caller could not tell what to free.
typedef struct {
	struct jpeg_destination_mgr pub;
	uint8_t *buf; // into, or malloc'ed when own
	size_t size;
	int own;
} membuf;

static void membuf_init(j_compress_ptr c) {
	membuf *m = (membuf *)c->dest;
	m->pub.next_output_byte = m->buf;
	m->pub.free_in_buffer = m->size;
}

static void membuf_term(j_compress_ptr c) { (void)c; }

static boolean membuf_grow(j_compress_ptr c) {
	membuf *m = (membuf *)c->dest;
	size_t size = m->size < 65536 ? 65536 : m->size * 2;
	uint8_t *bigger = m->own ? realloc(m->buf, size) : malloc(size);
	if (!bigger) ERREXIT1(c, JERR_OUT_OF_MEMORY, 0);
	if (!m->own) memcpy(bigger, m->buf, m->size);
	m->buf = bigger;
	m->own = 1;
	m->pub.next_output_byte = bigger + m->size;
	m->pub.free_in_buffer = size - m->size;
	m->size = size;
	return TRUE;
}

// membuf_start points c at m, which starts in into (room bytes) or, with
// no room, in memory of its own of about what a detailed frame takes.
static int membuf_start(j_compress_ptr c, membuf *m, uint8_t *into, size_t room, size_t guess) {
	*m = (membuf){{0}, into, room, 0};
	if (room == 0) {
		if (!(m->buf = malloc(guess))) return -1;
		m->size = guess, m->own = 1;
	}
	m->pub.init_destination = membuf_init;
	m->pub.empty_output_buffer = membuf_grow;
	m->pub.term_destination = membuf_term;
	c->dest = &m->pub;
	return 0;
}

static void membuf_drop(membuf *m) {
	if (m && m->own) free(m->buf);
}

// The YCbCr 4:2:0 planes a JPEG stores, read and written without chroma
// upsampling, colour conversion or downsampling (libjpeg's raw data): a
// chain of flips, crops and blurs on them saves both conversions and
// resamples the chroma once instead of three times.


int fl_jpeg_decode_ycc(const uint8_t *buf, size_t len, int rows, int mirror, fl_raster planes[3], uint8_t *mem[3], char *err, size_t errlen) {
	struct jpeg_decompress_struct d;
	fl_jerr e;
	uint8_t *volatile px[3] = {NULL, NULL, NULL};
	init_err(&e);
	d.err = &e.pub;
	jpeg_create_decompress(&d);
	if (setjmp(e.jump)) {
		set_err(err, errlen, e.msg);
		jpeg_destroy_decompress(&d);
		for (int k = 0; k < 3; k++) g_free(px[k]);
		return -1;
	}
	jpeg_mem_src(&d, buf, len);
	jpeg_read_header(&d, TRUE);
	if (!is_ycc420(&d)) {
		jpeg_destroy_decompress(&d);
		return 1;
	}
	d.raw_data_out = TRUE;
	jpeg_start_decompress(&d);
	int W = d.image_width, H = d.image_height;
	rows = rows < 1 ? 1 : rows > H ? H : rows;
	int strips = (rows + 15) / 16; // iMCU rows: 16 of luma, 8 of chroma
	for (int k = 0; k < 3; k++) {
		int half = k > 0, pw = half ? (W + 1) / 2 : W, ph = half ? (H + 1) / 2 : H;
		size_t stride = d.comp_info[k].width_in_blocks * DCTSIZE;
		if (!(px[k] = g_try_malloc(stride * (size_t)strips * (half ? 8 : 16)))) {
			strcpy(e.msg, "out of memory");
			longjmp(e.jump, 1);
		}
		int h = half ? (rows + 1) / 2 : rows;
		planes[k] = (fl_raster){px[k], stride, 1, pw, ph, 0, 0, pw, h};
	}
	for (int s = 0; s < strips; s++) {
		JSAMPROW r[3][16];
		JSAMPARRAY a[3] = {r[0], r[1], r[2]};
		for (int k = 0; k < 3; k++)
			for (int i = 0; i < (k ? 8 : 16); i++) r[k][i] = px[k] + ((size_t)s * (k ? 8 : 16) + i) * planes[k].stride;
		jpeg_read_raw_data(&d, a, 16);
		for (int k = 0; mirror && k < 3; k++) {
			fl_raster strip = planes[k];
			strip.px = r[k][0];
			strip.h = k ? 8 : 16;
			fl_flip(&strip, &strip, 0);
		}
	}
	if (d.output_scanline >= d.output_height) // raw data moves on in whole iMCU rows, past the height
		jpeg_finish_decompress(&d); // reads to the end, so truncation shows
	jpeg_destroy_decompress(&d);
	for (int k = 0; k < 3; k++) mem[k] = px[k];
	return 0;
}

// fill_strip copies n rows of p from row y on (the last row repeated past
// its end) into rows of width bytes, each padded with its last sample, as
// libjpeg pads the edges of what it downsamples.
static void fill_strip(const fl_raster *p, int y, int n, uint8_t *strip, size_t width) {
	for (int i = 0; i < n; i++) {
		const uint8_t *src = p->px + (size_t)(y + i < p->h ? y + i : p->h - 1) * p->stride;
		uint8_t *dst = strip + (size_t)i * width;
		memcpy(dst, src, p->w);
		memset(dst + p->w, src[p->w - 1], width - p->w);
	}
}

// write_rgb hands libjpeg the raster 16 rows a call; RGBA goes a row at a
// time through scratch (a row of RGB), laid over white.
static void write_rgb(j_compress_ptr c, const fl_raster *in, uint8_t *scratch) {
	while (c->next_scanline < c->image_height) {
		JSAMPROW rows[16];
		JDIMENSION n = 1;
		if (in->bands == 4) {
			fl_flatten(in, scratch, c->next_scanline);
			rows[0] = scratch;
		} else {
			n = c->image_height - c->next_scanline < 16 ? c->image_height - c->next_scanline : 16;
			for (JDIMENSION k = 0; k < n; k++) rows[k] = in->px + (size_t)(c->next_scanline + k) * in->stride;
		}
		jpeg_write_scanlines(c, rows, n);
	}
}

// ycc_strips lays out in scratch the strips libjpeg takes raw data in: 16
// rows of luma and 8 of each chroma, whole blocks wide. It returns their
// size.
static size_t ycc_strips(j_compress_ptr c, size_t width[3], size_t off[3]) {
	for (int k = 0; k < 3; k++) width[k] = c->comp_info[k].width_in_blocks * DCTSIZE;
	off[0] = 0, off[1] = 16 * width[0], off[2] = off[1] + 8 * width[1];
	return off[2] + 8 * width[2];
}

// write_ycc hands libjpeg the three planes a strip at a time, padded
// through scratch.
static void write_ycc(j_compress_ptr c, const fl_raster planes[3], uint8_t *scratch) {
	size_t width[3], off[3];
	ycc_strips(c, width, off);
	while (c->next_scanline < c->image_height) {
		JSAMPROW r[3][16];
		JSAMPARRAY a[3] = {r[0], r[1], r[2]};
		for (int k = 0; k < 3; k++) {
			int n = k ? 8 : 16, y = (int)c->next_scanline / (k ? 2 : 1);
			fill_strip(&planes[k], y, n, scratch + off[k], width[k]);
			for (int i = 0; i < n; i++) r[k][i] = scratch + off[k] + (size_t)i * width[k];
		}
		jpeg_write_raw_data(c, a, 16);
	}
}

// compress writes a baseline 4:2:0 JPEG of the raster in, or, when raw is
// 1, of the three planes from in on (fl_jpeg_encode, fl_jpeg_encode_ycc).
static int compress(const fl_raster *in, int raw, int quality, uint8_t *into, size_t room, uint8_t **dst, unsigned long *dstlen, char *err, size_t errlen) {
	struct jpeg_compress_struct c;
	fl_jerr e;
	membuf m;
	uint8_t *volatile scratch = NULL;
	*dst = NULL;
	*dstlen = 0;
	init_err(&e);
	c.err = &e.pub;
	jpeg_create_compress(&c);
	if (setjmp(e.jump)) {
		set_err(err, errlen, e.msg);
		jpeg_destroy_compress(&c);
		membuf_drop((membuf *)c.dest); // grown through c.dest, so read back from memory
		g_free(scratch);
		return -1;
	}
	if (membuf_start(&c, &m, into, room, (size_t)in->w * in->h / 2 + 65536)) {
		strcpy(e.msg, "out of memory");
		c.dest = &m.pub, m.own = 0;
		longjmp(e.jump, 1);
	}
	c.image_width = in->w;
	c.image_height = in->h;
	c.input_components = 3;
	c.in_color_space = raw ? JCS_YCbCr : JCS_RGB;
	jpeg_set_defaults(&c); // YCbCr, 4:2:0, Huffman tables not optimised
	jpeg_set_quality(&c, quality, TRUE);
	c.raw_data_in = raw == 1 ? TRUE : FALSE;
	jpeg_start_compress(&c, TRUE);
	size_t width[3], off[3], need = raw == 1 ? ycc_strips(&c, width, off) : in->bands == 4 ? (size_t)in->w * 3 : 0;
	if (need && !(scratch = g_try_malloc(need))) {
		strcpy(e.msg, "out of memory");
		longjmp(e.jump, 1);
	}
	if (raw == 1)
		write_ycc(&c, in, scratch);
	else
		write_rgb(&c, in, scratch);
	jpeg_finish_compress(&c);
	*dst = m.buf;
	*dstlen = m.size - m.pub.free_in_buffer;
	jpeg_destroy_compress(&c);
	g_free(scratch);
	return 0;
}

int fl_jpeg_encode(const fl_raster *in, int quality, uint8_t *into, size_t room, uint8_t **dst, unsigned long *dstlen, char *err, size_t errlen) {
	return compress(in, 0, quality, into, room, dst, dstlen, err, errlen);
}

int fl_jpeg_encode_ycc(const fl_raster planes[3], int quality, uint8_t *into, size_t room, uint8_t **dst, unsigned long *dstlen, char *err, size_t errlen) {
	return compress(planes, 1, quality, into, room, dst, dstlen, err, errlen);
}

// fl_jpeg_scaled decodes a JPEG scaled down by its DCT, as luminance alone
// (rgb 0: libjpeg then runs the inverse DCT of the luminance blocks alone at
// that scale, with no upsampling or colour conversion) or as RGB (rgb 1).
// Luminance takes the smallest scale M/8 (libjpeg-turbo scales by 1/8 to
// 8/8) that keeps the longer side at least size, so a 640x480 frame decodes
// at 3/8 straight to 240x180; RGB, for thumbnails, the largest of 1/8, 1/4
// and 1/2 that does, whose inverse DCTs libjpeg-turbo runs in SIMD. *pix
// gets w*h (RGB: 3*w*h) bytes (g_free them). The header goes to hdr (W, H,
// bands) first; over max_pixels nothing is decoded. Every scan is read to
// the end with fl_jpeg_check's warnings, so a decode that succeeds is also
// that check. Returns 0; 1 when the JPEG is not one this reads as asked
// (CMYK; for RGB also an embedded colour profile, which libvips applies); 2
// when it is over max_pixels; or -1 with err set.
//
// A luminance decode given thumb > 0 and ycc keeps the chroma as well when
// the JPEG is YCbCr (3 components, no colour profile, luma at the largest
// sampling factors) and the scale gives at least thumb pixels on the longer
// side (or the whole image, when smaller): it decodes the three planes at
// the same scale as libjpeg stores them (raw data, raw_planes), whose luma
// is the luminance the grey decode gives, byte for byte (libjpeg's grey
// output of a YCbCr JPEG is its luma plane, from the same inverse DCT), and
// *ycc gets them (g_free it), described by planes[3], for a thumbnail: the
// chroma blocks were read anyway, only their inverse DCT is added. *ycc is
// NULL otherwise.
int fl_jpeg_scaled(const uint8_t *buf, size_t len, int size, int rgb, long long max_pixels, fl_raster *hdr, uint8_t **pix,
		   int *w, int *h, char *err, size_t errlen) {
	return fl_jpeg_scaled_ycc(buf, len, size, rgb, 0, max_pixels, hdr, pix, NULL, NULL, w, h, err, errlen);
}

static int raw_planes(struct jpeg_decompress_struct *d, uint8_t **pix, fl_raster planes[3], uint8_t **ycc);

int fl_jpeg_scaled_ycc(const uint8_t *buf, size_t len, int size, int rgb, int thumb, long long max_pixels, fl_raster *hdr,
		       uint8_t **pix, fl_raster planes[3], uint8_t **ycc, int *w, int *h, char *err, size_t errlen) {
	struct jpeg_decompress_struct d;
	fl_jerr e;
	uint8_t *volatile out = NULL;
	*pix = NULL;
	if (ycc) *ycc = NULL;
	init_err(&e);
	d.err = &e.pub;
	jpeg_create_decompress(&d);
	if (setjmp(e.jump)) {
		set_err(err, errlen, e.msg);
		jpeg_destroy_decompress(&d);
		g_free(out);
		g_free(*pix); // raw_planes'
		*pix = NULL;
		if (ycc) {
			g_free(*ycc);
			*ycc = NULL;
		}
		return -1;
	}
	jpeg_mem_src(&d, buf, len);
	if (rgb || (thumb > 0 && ycc)) jpeg_save_markers(&d, JPEG_APP0 + 2, 0xffff);
	jpeg_read_header(&d, TRUE);
	hdr->W = d.image_width;
	hdr->H = d.image_height;
	hdr->bands = d.num_components;
	int profiled = 0;
	for (jpeg_saved_marker_ptr m = d.marker_list; m; m = m->next)
		if (m->marker == JPEG_APP0 + 2 && m->data_length >= 12 && !memcmp(m->data, "ICC_PROFILE", 12)) profiled = 1;
	if ((d.jpeg_color_space != JCS_YCbCr && d.jpeg_color_space != JCS_GRAYSCALE) || (rgb && profiled)) {
		jpeg_destroy_decompress(&d);
		return 1;
	}
	if ((long long)d.image_width * d.image_height > max_pixels) {
		jpeg_destroy_decompress(&d);
		return 2;
	}
	unsigned long side = d.image_width > d.image_height ? d.image_width : d.image_height;
	int num = 1, denom = 8;
	if (rgb) {
		while (denom > 1 && (side + denom - 1) / denom < (unsigned long)size) denom /= 2;
	} else {
		while (num < 8 && (side * num + 7) / 8 < (unsigned long)size) num++;
	}
	d.scale_num = num;
	d.scale_denom = denom;
	int keep = 0; // the chroma too, for a thumbnail
	if (!rgb && thumb > 0 && ycc && !profiled && d.jpeg_color_space == JCS_YCbCr && d.num_components == 3 &&
	    d.comp_info[0].h_samp_factor == d.max_h_samp_factor && d.comp_info[0].v_samp_factor == d.max_v_samp_factor) {
		jpeg_calc_output_dimensions(&d);
		unsigned long got = d.output_width > d.output_height ? d.output_width : d.output_height;
		keep = got >= (side < (unsigned long)thumb ? side : (unsigned long)thumb);
	}
	d.out_color_space = rgb ? JCS_RGB : JCS_GRAYSCALE;
	d.dct_method = JDCT_ISLOW;
	if (keep) {
		// The planes as decoded (raw data): the luma is the grey (libjpeg's
		// grey output of a YCbCr JPEG is its luma plane), and the chroma is
		// not upsampled, interleaved, nor converted on the way in or out.
		d.raw_data_out = TRUE;
		jpeg_start_decompress(&d);
		*w = d.output_width;
		*h = d.output_height;
		return raw_planes(&d, pix, planes, ycc);
	}
	jpeg_start_decompress(&d);
	size_t row = (size_t)d.output_width * (rgb || keep ? 3 : 1);
	out = g_malloc(row * d.output_height);
	while (d.output_scanline < d.output_height) {
		JSAMPROW rows[1] = {out + (size_t)d.output_scanline * row};
		jpeg_read_scanlines(&d, rows, 1);
	}
	*w = d.output_width;
	*h = d.output_height;
	jpeg_finish_decompress(&d); // reads to the end, so truncation shows
	jpeg_destroy_decompress(&d);
	*pix = out;
	return 0;
}

// raw_planes reads the three planes of a YCbCr JPEG started in raw data
// mode, each at its component's scaled size, into one allocation (*ycc,
// planes[k] in it), and copies the luma's rows to *pix (d's output size),
// then ends d as fl_jpeg_scaled_ycc does. An error jumps to e's setjmp in
// the caller, which frees *ycc and *pix.
static int raw_planes(struct jpeg_decompress_struct *d, uint8_t **pix, fl_raster planes[3], uint8_t **ycc) {
	size_t off[3], total = 0;
	int rows[3]; // a component's rows an iMCU row
	for (int k = 0; k < 3; k++) {
		jpeg_component_info *c = &d->comp_info[k];
		rows[k] = c->v_samp_factor * c->DCT_scaled_size;
		size_t stride = (size_t)c->width_in_blocks * c->DCT_scaled_size;
		off[k] = total;
		total += stride * rows[k] * d->total_iMCU_rows;
		planes[k] = (fl_raster){NULL, stride, 1, (int)c->downsampled_width, (int)c->downsampled_height, 0, 0,
					(int)c->downsampled_width, (int)c->downsampled_height};
	}
	*ycc = g_malloc(total);
	*pix = g_malloc((size_t)d->output_width * d->output_height);
	for (int k = 0; k < 3; k++) planes[k].px = *ycc + off[k];
	JSAMPROW r[3][4 * 16]; // at most 4 samples of 16 an iMCU row
	for (JDIMENSION m = 0; m < d->total_iMCU_rows; m++) {
		for (int k = 0; k < 3; k++)
			for (int i = 0; i < rows[k]; i++) r[k][i] = planes[k].px + ((size_t)m * rows[k] + i) * planes[k].stride;
		JSAMPARRAY a[3] = {r[0], r[1], r[2]};
		jpeg_read_raw_data(d, a, d->max_v_samp_factor * d->min_DCT_scaled_size);
	}
	for (JDIMENSION y = 0; y < d->output_height; y++)
		memcpy(*pix + (size_t)y * d->output_width, planes[0].px + (size_t)y * planes[0].stride, d->output_width);
	if (d->output_scanline >= d->output_height) // raw data moves on in whole iMCU rows, past the height
		jpeg_finish_decompress(d); // reads to the end, so truncation shows
	jpeg_destroy_decompress(d);
	return 0;
}
