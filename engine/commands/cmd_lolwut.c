/* LOLWUT [VERSION v] [arguments]: Redis 7.0's computer art. VERSION 5 draws
 * Georg Nees's "Schotter" in braille characters, VERSION 6 a city skyline
 * in terminal gray levels, anything else (and the default, as Goblin
 * answers as Redis 7.0) just the version line.
 *
 * The pictures are Redis's, drawn with the same arithmetic (the same float
 * and double steps, so the same pixels); their random parts (Schotter's
 * rows past the second, every skyline) come from Goblin's generator, not
 * from the C library's rand() that Redis seeds per process, so no two runs
 * of either server draw them alike. The last line names the server that
 * drew the picture: Goblin Core and its own version, where Redis names
 * itself and its version. */
#include <math.h>
#include <stdlib.h>

#include "engine/commands/cmd_util.h"
#include "engine/base/mem.h"
#include "engine/base/random.h"
#include "engine/base/strbuf.h"

#include "goblin/version.h"

/* M_PI (POSIX, not C11). */
#define LW_PI 3.14159265358979323846
#define LOLWUT_SIGNATURE "Goblin Core ver. " GOBLIN_VERSION "\n"

/* glibc's rand(): 0 .. 2^31-1. */
#define LW_RAND_MAX 2147483647
static int lw_rand(void) { return (int)(gb_random_u64() >> 33); }

/* ---- the canvas: 2 bits a pixel (colors 0..3), writes outside ignored ---- */

typedef struct lw_canvas {
    int width, height;
    uint8_t *px;
} lw_canvas;

static lw_canvas canvas_new(int width, int height, int color)
{
    lw_canvas c = {width, height, NULL};
    size_t bytes = ((size_t)width * (size_t)height + 3) / 4;
    c.px = gb_malloc(bytes + 1);
    memset(c.px, color * 0x55, bytes + 1); /* the color in all four slots of a byte */
    return c;
}

static void canvas_set(lw_canvas *c, int x, int y, int color)
{
    if (x < 0 || x >= c->width || y < 0 || y >= c->height)
        return;
    size_t k = (size_t)x + (size_t)y * (size_t)c->width;
    unsigned shift = (unsigned)(k % 4) * 2;
    c->px[k / 4] = (uint8_t)((c->px[k / 4] & ~(3u << shift)) | ((unsigned)color << shift));
}

static int canvas_get(const lw_canvas *c, int x, int y)
{
    if (x < 0 || x >= c->width || y < 0 || y >= c->height)
        return 0;
    size_t k = (size_t)x + (size_t)y * (size_t)c->width;
    return (c->px[k / 4] >> ((k % 4) * 2)) & 3;
}

/* Bresenham, from (x1,y1) to (x2,y2) both included. */
static void canvas_line(lw_canvas *c, int x1, int y1, int x2, int y2, int color)
{
    int dx = abs(x2 - x1), dy = abs(y2 - y1);
    int sx = x1 < x2 ? 1 : -1, sy = y1 < y2 ? 1 : -1;
    int err = dx - dy;
    for (;;) {
        canvas_set(c, x1, y1, color);
        if (x1 == x2 && y1 == y2)
            break;
        int e2 = err * 2;
        if (e2 > -dy) {
            err -= dy;
            x1 += sx;
        }
        if (e2 < dx) {
            err += dx;
            y1 += sy;
        }
    }
}

/* A square centred on (x,y), rotated by angle: its corners on the circle
 * through them, at 45 degrees plus the angle and every 90 from there. */
static void canvas_square(lw_canvas *c, int x, int y, float size, float angle, int color)
{
    int px[4], py[4];
    size /= 1.4142135623;
    size = (float)round(size);
    float k = (float)(LW_PI / 4 + angle);
    for (int j = 0; j < 4; j++) {
        px[j] = (int)round(sin(k) * size + x);
        py[j] = (int)round(cos(k) * size + y);
        k = (float)(k + LW_PI / 2);
    }
    for (int j = 0; j < 4; j++)
        canvas_line(c, px[j], py[j], px[(j + 1) % 4], py[(j + 1) % 4], color);
}

/* ---- version 5: Schotter ---- */

static lw_canvas draw_schotter(int console_cols, int squares_per_row, int squares_per_col)
{
    int canvas_width = console_cols * 2;
    int padding = canvas_width > 4 ? 2 : 0;
    float square_side = (float)(canvas_width - padding * 2) / (float)squares_per_row;
    int canvas_height = (int)(square_side * (float)squares_per_col + (float)(padding * 2));
    lw_canvas c = canvas_new(canvas_width, canvas_height, 0);
    for (int y = 0; y < squares_per_col; y++) {
        for (int x = 0; x < squares_per_row; x++) {
            int sx = (int)((float)x * square_side + square_side / 2 + (float)padding);
            int sy = (int)((float)y * square_side + square_side / 2 + (float)padding);
            /* Rows further down are turned and moved further at random. */
            float angle = 0;
            if (y > 1) {
                float r1 = (float)lw_rand() / (float)LW_RAND_MAX / (float)squares_per_col * (float)y;
                float r2 = (float)lw_rand() / (float)LW_RAND_MAX / (float)squares_per_col * (float)y;
                float r3 = (float)lw_rand() / (float)LW_RAND_MAX / (float)squares_per_col * (float)y;
                if (lw_rand() % 2)
                    r1 = -r1;
                if (lw_rand() % 2)
                    r2 = -r2;
                if (lw_rand() % 2)
                    r3 = -r3;
                angle = r1;
                sx = (int)((float)sx + r2 * square_side / 3);
                sy = (int)((float)sy + r3 * square_side / 3);
            }
            canvas_square(&c, sx, sy, square_side, angle, 1);
        }
    }
    return c;
}

/* Each 2x4 block of pixels as one braille character (U+2800 + its dots:
 * bits 0-2 the left column's top three, 3-5 the right's, 6 and 7 the
 * bottom pair), UTF-8 encoded. */
static void render_braille(const lw_canvas *c, gb_strbuf *out)
{
    for (int y = 0; y < c->height; y += 4) {
        for (int x = 0; x < c->width; x += 2) {
            int dots = canvas_get(c, x, y) | canvas_get(c, x, y + 1) << 1 | canvas_get(c, x, y + 2) << 2 |
                       canvas_get(c, x + 1, y) << 3 | canvas_get(c, x + 1, y + 1) << 4 |
                       canvas_get(c, x + 1, y + 2) << 5 | canvas_get(c, x, y + 3) << 6 |
                       canvas_get(c, x + 1, y + 3) << 7;
            int code = 0x2800 + dots;
            char utf8[3] = {(char)(0xE0 | (code >> 12)), (char)(0x80 | ((code >> 6) & 0x3F)),
                            (char)(0x80 | (code & 0x3F))};
            gb_strbuf_add(out, utf8, 3);
        }
        if (y != c->height - 1)
            gb_strbuf_addc(out, '\n');
    }
}

/* Redis's getLongFromObjectOrReply for each optional argument given. */
static bool parse_art_args(gb_client *c, int argc, gb_slice *argv, int64_t *vals, int n)
{
    for (int i = 0; i < n && i + 1 < argc; i++)
        if (!gb_arg_ll(c, argv[i + 1], &vals[i]))
            return false;
    return true;
}

static int clamp_arg(int64_t v, int max) { return v < 1 ? 1 : v > max ? max : (int)v; }

/* LOLWUT [VERSION 5] [columns [squares-per-row [squares-per-col]]] */
static void lolwut5(gb_client *c, int argc, gb_slice *argv)
{
    int64_t a[3] = {66, 8, 12};
    if (!parse_art_args(c, argc, argv, a, 3))
        return;
    lw_canvas canvas = draw_schotter(clamp_arg(a[0], 1000), clamp_arg(a[1], 200), clamp_arg(a[2], 200));
    gb_strbuf out = {0};
    render_braille(&canvas, &out);
    gb_strbuf_adds(&out, "\nGeorg Nees - schotter, plotter on paper, 1968. " LOLWUT_SIGNATURE);
    gb_reply_verbatim(c, out.p, out.len);
    gb_strbuf_free(&out);
    gb_free(canvas.px);
}

/* ---- version 6: a skyline ---- */

typedef struct skyscraper {
    int xoff, width, height;
    bool windows;
    int color;
} skyscraper;

static void draw_skyscraper(lw_canvas *c, const skyscraper *si)
{
    int starty = c->height - 1;
    int endy = starty - si->height + 1;
    for (int y = starty; y >= endy; y--) {
        for (int x = si->xoff; x < si->xoff + si->width; x++) {
            /* The roof is four pixels narrower. */
            if (y == endy && (x <= si->xoff + 1 || x >= si->xoff + si->width - 2))
                continue;
            int color = si->color;
            /* Windows, away from the walls: two pixels wide, one tall
             * (terminal cells are not square), of one random gray. */
            if (si->windows && x > si->xoff + 1 && x < si->xoff + si->width - 2 && y > endy + 1 &&
                y < starty - 1) {
                int relx = x - (si->xoff + 1), rely = y - (endy + 1);
                if (relx / 2 % 2 && rely % 2) {
                    do {
                        color = 1 + lw_rand() % 2;
                    } while (color == si->color);
                    if (relx % 2)
                        color = canvas_get(c, x - 1, y);
                }
            }
            canvas_set(c, x, y, color);
        }
    }
}

static void draw_skyline(lw_canvas *c)
{
    skyscraper si;
    /* The background without windows, the lighter gray furthest back. */
    for (int color = 2; color >= 1; color--) {
        si.color = color;
        for (int offset = -10; offset < c->width;) {
            offset += lw_rand() % 8;
            si.xoff = offset;
            si.width = 10 + lw_rand() % 9;
            if (color == 2)
                si.height = c->height / 2 + lw_rand() % c->height / 2;
            else
                si.height = c->height / 2 + lw_rand() % c->height / 3;
            si.windows = false;
            draw_skyscraper(c, &si);
            offset += color == 2 ? si.width / 2 : si.width + 1;
        }
    }
    /* The foreground, with windows. */
    si.color = 0;
    for (int offset = -10; offset < c->width;) {
        offset += lw_rand() % 8;
        si.xoff = offset;
        si.width = 5 + lw_rand() % 14;
        if (si.width % 4)
            si.width += si.width % 3;
        si.height = c->height / 3 + lw_rand() % c->height / 2;
        si.windows = true;
        draw_skyscraper(c, &si);
        offset += si.width + 5;
    }
}

/* Each pixel a space in one of four grays (foreground and background set
 * alike, for terminals that differ). */
static void render_grays(const lw_canvas *c, gb_strbuf *out)
{
    static const char *const escapes[4] = {"0;30;40m", "0;90;100m", "0;37;47m", "0;97;107m"};
    for (int y = 0; y < c->height; y++) {
        for (int x = 0; x < c->width; x++)
            gb_strbuf_printf(out, "\033[%s \033[0m", escapes[canvas_get(c, x, y)]);
        if (y != c->height - 1)
            gb_strbuf_addc(out, '\n');
    }
}

/* LOLWUT VERSION 6 [columns [rows]] */
static void lolwut6(gb_client *c, int argc, gb_slice *argv)
{
    int64_t a[2] = {80, 20};
    if (!parse_art_args(c, argc, argv, a, 2))
        return;
    lw_canvas canvas = canvas_new(clamp_arg(a[0], 1000), clamp_arg(a[1], 1000), 3);
    draw_skyline(&canvas);
    gb_strbuf out = {0};
    render_grays(&canvas, &out);
    gb_strbuf_adds(&out, "\nDedicated to the 8 bit game developers of past and present.\n"
                         "Original 8 bit image from Plaguemon by hikikomori. " LOLWUT_SIGNATURE);
    gb_reply_verbatim(c, out.p, out.len);
    gb_strbuf_free(&out);
    gb_free(canvas.px);
}

/* VERSION v picks by the text "<v as a 32-bit unsigned>.0.0", as Redis: 5
 * and 6 have pictures; every other version (and the default, 7.0) only the
 * version line. The picture's own arguments follow VERSION v. */
static void cmd_lolwut(gb_client *c, int argc, gb_slice *argv)
{
    int64_t version = 7;
    if (argc >= 3 && gb_arg_is(argv[1], "version")) {
        if (!gb_arg_ll(c, argv[2], &version))
            return;
        version = (uint32_t)version;
        argc -= 2;
        argv += 2;
    }
    if (version == 5)
        lolwut5(c, argc, argv);
    else if (version == 6)
        lolwut6(c, argc, argv);
    else
        gb_reply_verbatim(c, LOLWUT_SIGNATURE, strlen(LOLWUT_SIGNATURE));
}

GB_DEFINE_COMMANDS(lolwut,
    {"lolwut", cmd_lolwut});
