//! The squarified treemap layout (Bruls, Huizing and van Wijk, "Squarified Treemaps", 2000) the
//! HTML report draws an image's size breakdown with: each part gets a rectangle whose area is its
//! share of the whole, laid out in rows that keep the rectangles as close to squares as the sizes
//! allow, so small parts stay readable instead of becoming slivers.

/// A rectangle in the chart's coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Rect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

impl Rect {
    pub fn area(&self) -> f64 {
        self.width * self.height
    }

    /// The same rectangle with the axes swapped.
    fn transposed(self) -> Rect {
        Rect {
            x: self.y,
            y: self.x,
            width: self.height,
            height: self.width,
        }
    }
}

/// One rectangle per size, in the order given, tiling `bounds` with areas proportional to the
/// sizes. A zero size gets an empty rectangle at `bounds`' origin; all zero, all empty.
pub(super) fn squarify(sizes: &[u64], bounds: Rect) -> Vec<Rect> {
    let empty = Rect {
        width: 0.0,
        height: 0.0,
        ..bounds
    };
    let mut rects = vec![empty; sizes.len()];
    let total: u64 = sizes.iter().sum();
    if total == 0 || bounds.area() <= 0.0 {
        return rects;
    }
    // Largest first, as the algorithm needs; ties keep their given order so the layout is stable.
    let mut order: Vec<usize> = (0..sizes.len()).filter(|&i| sizes[i] > 0).collect();
    order.sort_by(|&a, &b| sizes[b].cmp(&sizes[a]));
    let scale = bounds.area() / total as f64;
    let areas: Vec<(usize, f64)> = order
        .iter()
        .map(|&i| (i, sizes[i] as f64 * scale))
        .collect();

    let mut free = bounds;
    let mut row: Vec<(usize, f64)> = Vec::new();
    for &item in &areas {
        let side = free.width.min(free.height);
        let mut longer = row.clone();
        longer.push(item);
        if row.is_empty() || worst_ratio(&longer, side) <= worst_ratio(&row, side) {
            row = longer;
        } else {
            free = place_row(&row, free, false, &mut rects);
            row = vec![item];
        }
    }
    place_row(&row, free, true, &mut rects);
    rects
}

/// The worst aspect ratio (≥ 1) of `row` laid along a side of length `side`.
fn worst_ratio(row: &[(usize, f64)], side: f64) -> f64 {
    let sum: f64 = row.iter().map(|(_, area)| area).sum();
    let side2 = side * side;
    row.iter()
        .map(|&(_, area)| (side2 * area / (sum * sum)).max(sum * sum / (side2 * area)))
        .fold(1.0, f64::max)
}

/// Places `row` as a strip along the shorter side of `free`; returns what is left of `free`. The
/// strip's last rectangle ends where `free` does, and the `last` row takes all of `free`, so
/// rounding leaves no gap at the edges.
fn place_row(row: &[(usize, f64)], free: Rect, last: bool, rects: &mut [Rect]) -> Rect {
    let sum: f64 = row.iter().map(|(_, area)| area).sum();
    if sum <= 0.0 {
        return free;
    }
    // Laid out as a column on the left of a frame whose width is the longer side: `free` itself
    // when it is wider than tall, else `free` transposed (the column is then a row along the top).
    let wide = free.width >= free.height;
    let orient = |rect: Rect| if wide { rect } else { rect.transposed() };
    let frame = orient(free);
    let width = if last {
        frame.width
    } else {
        (sum / frame.height).min(frame.width)
    };
    let mut y = frame.y;
    for (position, &(index, area)) in row.iter().enumerate() {
        let height = if position + 1 == row.len() {
            frame.y + frame.height - y
        } else {
            area / width
        };
        rects[index] = orient(Rect {
            x: frame.x,
            y,
            width,
            height,
        });
        y += height;
    }
    orient(Rect {
        x: frame.x + width,
        width: frame.width - width,
        ..frame
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOUNDS: Rect = Rect {
        x: 10.0,
        y: 20.0,
        width: 600.0,
        height: 400.0,
    };

    fn overlap(a: &Rect, b: &Rect) -> f64 {
        let w = (a.x + a.width).min(b.x + b.width) - a.x.max(b.x);
        let h = (a.y + a.height).min(b.y + b.height) - a.y.max(b.y);
        w.max(0.0) * h.max(0.0)
    }

    #[test]
    fn areas_are_proportional_and_tile_the_bounds() {
        let sizes = [16_892_843, 9_547_359, 8_806_271, 72_113, 741_088, 0, 1];
        let total: u64 = sizes.iter().sum();
        let rects = squarify(&sizes, BOUNDS);
        assert_eq!(rects.len(), sizes.len());
        for (size, rect) in sizes.iter().zip(&rects) {
            let expected = BOUNDS.area() * *size as f64 / total as f64;
            assert!(
                (rect.area() - expected).abs() < 1e-6 * BOUNDS.area(),
                "{rect:?}"
            );
            assert!(
                rect.x >= BOUNDS.x - 1e-9 && rect.y >= BOUNDS.y - 1e-9,
                "{rect:?}"
            );
            assert!(
                rect.x + rect.width <= BOUNDS.x + BOUNDS.width + 1e-6,
                "{rect:?}"
            );
            assert!(
                rect.y + rect.height <= BOUNDS.y + BOUNDS.height + 1e-6,
                "{rect:?}"
            );
        }
        for (i, a) in rects.iter().enumerate() {
            for b in &rects[i + 1..] {
                assert!(overlap(a, b) < 1e-6, "{a:?} overlaps {b:?}");
            }
        }
        let covered: f64 = rects.iter().map(Rect::area).sum();
        assert!((covered - BOUNDS.area()).abs() < 1e-6);
    }

    #[test]
    fn equal_parts_come_out_square() {
        // Four equal parts of a square are four squares, not four strips.
        let square = Rect {
            x: 0.0,
            y: 0.0,
            width: 100.0,
            height: 100.0,
        };
        for rect in squarify(&[5, 5, 5, 5], square) {
            assert!((rect.width - 50.0).abs() < 1e-9 && (rect.height - 50.0).abs() < 1e-9);
        }
    }

    #[test]
    fn nothing_to_show_gives_empty_rectangles() {
        assert!(squarify(&[0, 0], BOUNDS).iter().all(|r| r.area() == 0.0));
        assert!(squarify(&[], BOUNDS).is_empty());
        assert_eq!(squarify(&[7], BOUNDS), vec![BOUNDS]);
    }
}
