//! Rust references of the real-kernel corpus (tests/fixtures/real/): for each entry, the final
//! contents of every output, computed from the inputs, the params and the launch the manifest
//! gives, written from the algorithm (not from the PTX). An output element the kernel leaves
//! alone keeps its initial contents, a sentinel unless the manifest fills it.
#![allow(
    dead_code,
    unreachable_pub,
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_range_loop,
    clippy::too_many_lines
)]

use jitseam_abi::ElementKind;

use crate::real_corpus::{Case, Data, Rng, Scalar};

fn out_f32(c: &Case, name: &str) -> Vec<f32> {
    c.f32(name).to_vec()
}

fn u(v: i64) -> usize {
    usize::try_from(v).unwrap()
}

/// `rows x cols` products of `a(i, k)` and `b(k, j)` summed over `k < inner`, in order.
fn matmul(
    rows: usize,
    cols: usize,
    inner: usize,
    a: impl Fn(usize, usize) -> f32,
    b: impl Fn(usize, usize) -> f32,
) -> Vec<f32> {
    let mut out = vec![0.0; rows * cols];
    for i in 0..rows {
        for j in 0..cols {
            out[i * cols + j] = (0..inner).map(|k| a(i, k) * b(k, j)).sum();
        }
    }
    out
}

/// The BFS kernel's frontier: the nodes whose mask is set (each visited, at cost 2).
const BFS_FRONTIER: [usize; 5] = [0, 5, 9, 17, 30];

/// Fills the pointers whose manifest fill is `custom`.
pub fn custom_fill(
    entry: &str,
    pointer: &str,
    kind: ElementKind,
    len: usize,
    rng: &mut Rng,
) -> Data {
    match (entry, pointer) {
        ("ggml_opt_step_adamw_f32", "pars") => {
            let t = 3;
            let (beta1, beta2) = (0.9f64, 0.999f64);
            let pars = [
                0.001,
                beta1,
                beta2,
                1e-8,
                0.01,
                1.0 / (1.0 - beta1.powi(t)),
                1.0 / (1.0 - beta2.powi(t)),
            ];
            assert_eq!(len, pars.len());
            Data::from_fn(kind, len, |i| Scalar::Float(pars[i]))
        }
        ("rodinia_bfs_kernel", "g_graph_nodes") => {
            let n = len / 2;
            let mut nodes = Vec::with_capacity(len);
            for i in 0..n {
                nodes.push(Scalar::Int(3 * i as i128));
                nodes.push(Scalar::Int(i128::from(rng.int(0, 4))));
            }
            Data::from_fn(kind, len, |i| nodes[i])
        }
        ("rodinia_bfs_kernel", "g_graph_mask") => Data::from_fn(kind, len, |i| {
            Scalar::Int(i128::from(BFS_FRONTIER.contains(&i)))
        }),
        ("rodinia_bfs_kernel", "g_graph_visited") => Data::from_fn(kind, len, |i| {
            Scalar::Int(i128::from(BFS_FRONTIER.contains(&i) || i % 7 == 3))
        }),
        ("rodinia_bfs_kernel", "g_cost") => Data::from_fn(kind, len, |i| {
            Scalar::Int(if BFS_FRONTIER.contains(&i) {
                2
            } else if i % 7 == 3 {
                1
            } else {
                -1
            })
        }),
        ("rodinia_lud_diagonal", "m") => {
            let dim = 20;
            Data::from_fn(kind, len, |i| {
                Scalar::Float(if i / dim == i % dim {
                    20.0
                } else {
                    rng.uniform(0.0, 1.0)
                })
            })
        }
        ("rodinia_gaussian_fan1", "a_cuda") => {
            let size = 20;
            Data::from_fn(kind, len, |i| {
                Scalar::Float(if i / size == i % size {
                    10.0
                } else {
                    rng.uniform(-1.0, 1.0)
                })
            })
        }
        ("rodinia_srad", "d_iN") => {
            Data::from_fn(kind, len, |r| Scalar::Int(r.saturating_sub(1) as i128))
        }
        ("rodinia_srad", "d_iS") => {
            Data::from_fn(kind, len, |r| Scalar::Int((r + 1).min(len - 1) as i128))
        }
        ("rodinia_srad", "d_jW") => {
            Data::from_fn(kind, len, |c| Scalar::Int(c.saturating_sub(1) as i128))
        }
        ("rodinia_srad", "d_jE") => {
            Data::from_fn(kind, len, |c| Scalar::Int((c + 1).min(len - 1) as i128))
        }
        ("samples_particles_find_cell_start", "cellStart") => {
            Data::from_fn(kind, len, |_| Scalar::Int(0xffff_ffff))
        }
        ("samples_particles_find_cell_start", "gridParticleHash") => {
            let mut hashes: Vec<i64> = (0..len).map(|_| rng.int(0, 64)).collect();
            hashes.sort_unstable();
            Data::from_fn(kind, len, |i| Scalar::Int(i128::from(hashes[i])))
        }
        ("samples_particles_find_cell_start", "gridParticleIndex") => {
            let mut perm: Vec<usize> = (0..len).collect();
            for i in (1..len).rev() {
                perm.swap(i, u(rng.int(0, i as i64 + 1)));
            }
            Data::from_fn(kind, len, |i| Scalar::Int(perm[i] as i128))
        }
        _ => panic!("{entry}: no custom fill for {pointer}"),
    }
}

/// The expected outputs of `c`'s entry.
pub fn reference(c: &Case) -> Vec<(&'static str, Data)> {
    let grid = c.grid.map(|g| g as usize);
    let block = c.block.map(|b| b as usize);
    match c.entry.as_str() {
        "ggml_clamp_f32" => {
            let (x, lo, hi) = (c.f32("x"), c.float("min"), c.float("max"));
            vec![(
                "dst",
                Data::F32(x.iter().map(|v| v.max(lo).min(hi)).collect()),
            )]
        }
        "ggml_scale_f32" => {
            let (x, s, b) = (c.f32("x"), c.float("scale"), c.float("bias"));
            vec![(
                "dst",
                Data::F32(x.iter().map(|v| s.mul_add(*v, b)).collect()),
            )]
        }
        "ggml_silu_f32" => {
            let x = c.f32("x");
            vec![(
                "dst",
                Data::F32(x.iter().map(|v| v / (1.0 + (-v).exp())).collect()),
            )]
        }
        "ggml_gelu_f32" => {
            let x = c.f32("x");
            let gelu =
                |x: f32| 0.5 * x * (1.0 + (0.797_884_6 * x * (1.0 + 0.044715 * x * x)).tanh());
            vec![("dst", Data::F32(x.iter().map(|v| gelu(*v)).collect()))]
        }
        "ggml_add_bcast_f32" => {
            let (src0, src1) = (c.f32("src0"), c.f32("src1"));
            let mut dst = out_f32(c, "dst");
            let n = |s: &str| u(c.int(s));
            for i3 in 0..n("ne3") {
                for i2 in 0..n("ne2") {
                    for i1 in 0..n("ne1") {
                        for i0 in 0..n("ne0") {
                            let a = src0[i3 * n("s03") + i2 * n("s02") + i1 * n("s01") + i0];
                            let b = src1[(i3 % n("ne13")) * n("s13")
                                + (i2 % n("ne12")) * n("s12")
                                + (i1 % n("ne11")) * n("s11")
                                + i0 % n("ne10")];
                            dst[i3 * n("s3") + i2 * n("s2") + i1 * n("s1") + i0] = a + b;
                        }
                    }
                }
            }
            vec![("dst", Data::F32(dst))]
        }
        "ggml_get_rows_f32" => {
            let (src0, src1) = (c.f32("src0"), c.i32("src1"));
            let (ne00, s1, s01) = (u(c.int("ne00")), u(c.int("s1")), u(c.int("s01")));
            let mut dst = out_f32(c, "dst");
            for i10 in 0..grid[0] {
                let row = usize::try_from(src1[i10]).unwrap();
                for i00 in 0..ne00 {
                    dst[i10 * s1 + i00] = src0[row * s01 + i00];
                }
            }
            vec![("dst", Data::F32(dst))]
        }
        "ggml_get_rows_back_f32" => {
            let (grad, rows) = (c.f32("grad"), c.i32("rows"));
            let ncols = u(c.int("ncols"));
            let mut dst = out_f32(c, "dst");
            for r in 0..grid[1] * block[1] {
                for col in 0..ncols {
                    let mut sum = 0.0f32;
                    for (i, &row) in rows.iter().enumerate() {
                        if usize::try_from(row).ok() == Some(r) {
                            sum += grad[i * ncols + col];
                        }
                    }
                    dst[r * ncols + col] = sum;
                }
            }
            vec![("dst", Data::F32(dst))]
        }
        "ggml_soft_max_f32" => {
            let (x, scale, ncols) = (c.f32("x"), c.float("scale"), u(c.int("ncols")));
            let mut dst = out_f32(c, "dst");
            for (row, out) in x.chunks(ncols).zip(dst.chunks_mut(ncols)) {
                let vals: Vec<f32> = row.iter().map(|v| v * scale).collect();
                let max = vals.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let e: Vec<f32> = vals.iter().map(|v| (v - max).exp()).collect();
                let sum: f32 = e.iter().sum();
                for (o, v) in out.iter_mut().zip(e) {
                    *o = v * (1.0 / sum);
                }
            }
            vec![("dst", Data::F32(dst))]
        }
        "ggml_rms_norm_f32" | "ggml_norm_f32" => {
            let x = c.f32("x");
            let ncols = u(c.int("ncols"));
            let (sr, sc, ss) = (
                u(c.int("stride_row")),
                u(c.int("stride_channel")),
                u(c.int("stride_sample")),
            );
            let eps = c.float("eps");
            let mut dst = out_f32(c, "dst");
            for sample in 0..grid[2] {
                for channel in 0..grid[1] {
                    for row in 0..grid[0] {
                        let xr = &x[sample * ss + channel * sc + row * sr..][..ncols];
                        let at = ((sample * grid[1] + channel) * grid[0] + row) * ncols;
                        let mean = xr.iter().map(|v| f64::from(*v)).sum::<f64>() / ncols as f64;
                        let sq = xr.iter().map(|v| f64::from(v * v)).sum::<f64>() / ncols as f64;
                        for col in 0..ncols {
                            let v = f64::from(xr[col]);
                            dst[at + col] = if c.entry == "ggml_rms_norm_f32" {
                                (v / (sq + f64::from(eps)).sqrt()) as f32
                            } else {
                                ((v - mean) / (sq - mean * mean + f64::from(eps)).sqrt()) as f32
                            };
                        }
                    }
                }
            }
            vec![("dst", Data::F32(dst))]
        }
        "ggml_rope_norm_f32" => {
            let (x, pos) = (c.f32("x"), c.i32("pos"));
            let n = |s: &str| u(c.int(s));
            let (ne0, ne1, nb01, nb02, n_dims) =
                (n("ne0"), n("ne1"), n("nb01"), n("nb02"), n("n_dims"));
            let (freq_scale, ext_factor, attn_factor) = (
                c.float("freq_scale"),
                c.float("ext_factor"),
                c.float("attn_factor"),
            );
            let (low, high, theta_scale) = (
                c.float("corr_low"),
                c.float("corr_high"),
                c.float("theta_scale"),
            );
            let mut dst = out_f32(c, "dst");
            for row_dst in 0..grid[0] * block[0] {
                let (row_x, channel_x) = (row_dst % ne1, row_dst / ne1);
                for i0 in (0..ne0).step_by(2) {
                    let idst = row_dst * ne0 + i0;
                    let ix = channel_x * nb02 + row_x * nb01 + i0;
                    let (x0, x1) = (f64::from(x[ix]), f64::from(x[ix + 1]));
                    if i0 >= n_dims {
                        dst[idst] = x0 as f32;
                        dst[idst + 1] = x1 as f32;
                        continue;
                    }
                    let theta_extrap =
                        f64::from(pos[channel_x]) * f64::from(theta_scale).powf(i0 as f64 / 2.0);
                    let theta_interp = f64::from(freq_scale) * theta_extrap;
                    let mut theta = theta_interp;
                    let mut mscale = f64::from(attn_factor);
                    if ext_factor != 0.0 {
                        let y = ((i0 / 2) as f64 - f64::from(low))
                            / f64::max(0.001, f64::from(high - low));
                        let ramp = 1.0 - y.clamp(0.0, 1.0);
                        let mix = ramp * f64::from(ext_factor);
                        theta = theta_interp * (1.0 - mix) + theta_extrap * mix;
                        mscale *= 1.0 + 0.1 * (1.0 / f64::from(freq_scale)).ln();
                    }
                    let (sin, cos) = (theta.sin() * mscale, theta.cos() * mscale);
                    dst[idst] = (x0 * cos - x1 * sin) as f32;
                    dst[idst + 1] = (x0 * sin + x1 * cos) as f32;
                }
            }
            vec![("dst", Data::F32(dst))]
        }
        "ggml_concat_f32_dim0" => {
            let (x, y) = (c.f32("x"), c.f32("y"));
            let (ne0, ne00) = (u(c.int("ne0")), u(c.int("ne00")));
            let mut dst = out_f32(c, "dst");
            for z in 0..grid[2] {
                for r in 0..grid[1] {
                    for i in 0..ne0 {
                        dst[i + r * ne0 + z * ne0 * grid[1]] = if i < ne00 {
                            x[i + r * ne00 + z * ne00 * grid[1]]
                        } else {
                            let w = ne0 - ne00;
                            y[(i - ne00) + r * w + z * w * grid[1]]
                        };
                    }
                }
            }
            vec![("dst", Data::F32(dst))]
        }
        "ggml_pad_f32" => {
            let x = c.f32("x");
            let n = |s: &str| u(c.int(s));
            let (ne0, ne00, ne01) = (n("ne0"), n("ne00"), n("ne01"));
            let planes = n("ne02") * n("ne03");
            let mut dst = out_f32(c, "dst");
            for z in 0..grid[2] {
                for r in 0..grid[1] {
                    for i in 0..ne0 {
                        dst[i + r * ne0 + z * ne0 * grid[1]] = if i < ne00 && r < ne01 && z < planes
                        {
                            x[i + r * ne00 + z * ne00 * ne01]
                        } else {
                            0.0
                        };
                    }
                }
            }
            vec![("dst", Data::F32(dst))]
        }
        "ggml_cpy_permute_f32" => {
            let x = c.f32("x");
            let n = |s: &str| u(c.int(s));
            let (ne00, ne01, ne02) = (n("ne00"), n("ne01"), n("ne02"));
            let dst = (0..n("ne"))
                .map(|i| {
                    let (i00, i01) = (i % ne00, (i / ne00) % ne01);
                    let (i02, i03) = ((i / (ne00 * ne01)) % ne02, i / (ne00 * ne01 * ne02));
                    x[i00 * n("s00") + i01 * n("s01") + i02 * n("s02") + i03 * n("s03")]
                })
                .collect();
            vec![("dst", Data::F32(dst))]
        }
        "ggml_argmax_f32" => {
            let (x, ncols) = (c.f32("x"), u(c.int("ncols")));
            let dst = x
                .chunks(ncols)
                .map(|row| {
                    let mut best = 0;
                    for (i, v) in row.iter().enumerate() {
                        if *v > row[best] {
                            best = i;
                        }
                    }
                    i32::try_from(best).unwrap()
                })
                .collect();
            vec![("dst", Data::I32(dst))]
        }
        "ggml_sum_rows_f32" => {
            let (x, ncols) = (c.f32("x"), u(c.int("ncols")));
            vec![(
                "dst",
                Data::F32(x.chunks(ncols).map(|r| r.iter().sum()).collect()),
            )]
        }
        "ggml_scatter_add_f32" => {
            let (ids, src) = (c.i32("ids"), c.f32("src"));
            let n = |s: &str| u(c.int(s));
            let (ne00, ne01) = (n("ne00"), n("ne01"));
            let mut dst = out_f32(c, "dst");
            for i2 in 0..n("ne02") {
                for i1 in 0..ne01 {
                    for i0 in 0..ne00 {
                        let at = (i2 * ne01 + i1) * ne00 + i0;
                        let id = usize::try_from(ids[at]).unwrap();
                        dst[i1 * n("s1") + i2 * n("s2") + id] += src[at];
                    }
                }
            }
            vec![("dst", Data::F32(dst))]
        }
        "ggml_cross_entropy_loss_f32" => {
            let (logits, labels) = (c.f32("logits"), c.f32("labels"));
            let (nclasses, k) = (u(c.int("nclasses")), c.int("k") as f32);
            let dst = logits
                .chunks(nclasses)
                .zip(labels.chunks(nclasses))
                .map(|(l, y)| {
                    let max = l.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                    let sum = l.iter().map(|v| (v - max).exp()).sum::<f32>().ln();
                    let loss: f32 = l.iter().zip(y).map(|(v, y)| (v - max - sum) * y).sum();
                    -loss / k
                })
                .collect();
            vec![("dst", Data::F32(dst))]
        }
        "ggml_opt_step_adamw_f32" => {
            let (g, pars) = (c.f32("g"), c.f32("pars"));
            let (mut x, mut gm, mut gv) = (out_f32(c, "x"), out_f32(c, "g_m"), out_f32(c, "g_v"));
            let [alpha, beta1, beta2, eps, wd, beta1h, beta2h] =
                [0, 1, 2, 3, 4, 5, 6].map(|i| pars[i]);
            for i in 0..x.len() {
                gm[i] = gm[i] * beta1 + g[i] * (1.0 - beta1);
                gv[i] = gv[i] * beta2 + g[i] * g[i] * (1.0 - beta2);
                let mh = gm[i] * beta1h;
                let vh = (gv[i] * beta2h).sqrt() + eps;
                x[i] = x[i] * (1.0 - alpha * wd) - alpha * mh / vh;
            }
            vec![
                ("x", Data::F32(x)),
                ("g_m", Data::F32(gm)),
                ("g_v", Data::F32(gv)),
            ]
        }
        "ggml_diag_mask_inf_f32" => {
            let x = c.f32("x");
            let n = |s: &str| u(c.int(s));
            let (ncols, rpc, n_past) = (n("ncols"), n("rows_per_channel"), n("n_past"));
            let mut dst = out_f32(c, "dst");
            for row in 0..grid[0] * block[0] {
                for col in 0..ncols {
                    let i = row * ncols + col;
                    let masked = if col > n_past + row % rpc {
                        f32::MAX
                    } else {
                        0.0
                    };
                    dst[i] = x[i] - masked;
                }
            }
            vec![("dst", Data::F32(dst))]
        }
        "llmc_encoder_forward" => {
            let (inp, wte, wpe) = (c.i32("inp"), c.f32("wte"), c.f32("wpe"));
            let (b_, t_, c_) = (u(c.int("B")), u(c.int("T")), u(c.int("C")));
            let mut out = out_f32(c, "out");
            for b in 0..b_ {
                for t in 0..t_ {
                    let ix = usize::try_from(inp[b * t_ + t]).unwrap();
                    for ch in 0..c_ {
                        out[(b * t_ + t) * c_ + ch] = wte[ix * c_ + ch] + wpe[t * c_ + ch];
                    }
                }
            }
            vec![("out", Data::F32(out))]
        }
        "llmc_crossentropy_forward" => {
            let (probs, targets) = (c.f32("probs"), c.i32("targets"));
            let v = u(c.int("V"));
            let losses = targets
                .iter()
                .enumerate()
                .map(|(i, &ix)| -probs[i * v + usize::try_from(ix).unwrap()].ln())
                .collect();
            vec![("losses", Data::F32(losses))]
        }
        "llmc_residual_forward_packed128" => {
            let (a, b) = (c.f32("inp1"), c.f32("inp2"));
            vec![(
                "out",
                Data::F32(a.iter().zip(b).map(|(x, y)| x + y).collect()),
            )]
        }
        "torch_index_select_large_index" => {
            let (src, indices) = (c.f32("src"), c.i64("indices"));
            let inner = u(c.int("innerSize"));
            let dst = (0..u(c.int("totalSize")))
                .map(|i| src[u(indices[i / inner]) * inner + i % inner])
                .collect();
            vec![("dst", Data::F32(dst))]
        }
        "vllm_paged_attention_qk" => {
            let (q, k_cache) = (c.f32("q"), c.f32("k_cache"));
            let (tables, lens) = (c.i32("block_tables"), c.i32("seq_lens"));
            let n = |s: &str| u(c.int(s));
            let (heads, hs, bs) = (n("num_heads"), n("head_size"), n("block_size"));
            let (max_blocks, max_len) = (n("max_num_blocks_per_seq"), n("max_seq_len"));
            let scale = c.float("scale");
            let mut out = out_f32(c, "out_logits");
            for seq in 0..grid[1] {
                for head in 0..grid[0] {
                    let qp = &q[(seq * heads + head) * hs..][..hs];
                    for token in 0..usize::try_from(lens[seq]).unwrap() {
                        let block = u(i64::from(tables[seq * max_blocks + token / bs]));
                        let kp = &k_cache[((block * heads + head) * bs + token % bs) * hs..][..hs];
                        let qk: f32 = qp.iter().zip(kp).map(|(a, b)| a * b).sum();
                        out[(seq * heads + head) * max_len + token] = scale * qk;
                    }
                }
            }
            vec![("out_logits", Data::F32(out))]
        }
        "polybench_gemm" => {
            let (a, b) = (c.f32("a"), c.f32("b"));
            let (alpha, beta) = (c.float("alpha"), c.float("beta"));
            let n = 24;
            let mut out = out_f32(c, "c");
            for i in 0..u(c.int("ni")) {
                for j in 0..u(c.int("nj")) {
                    let mut v = out[i * n + j] * beta;
                    for k in 0..u(c.int("nk")) {
                        v += alpha * a[i * n + k] * b[k * n + j];
                    }
                    out[i * n + j] = v;
                }
            }
            vec![("c", Data::F32(out))]
        }
        "polybench_2mm_kernel1" => {
            let (a, b, alpha) = (c.f32("A"), c.f32("B"), c.float("alpha"));
            let n = 20;
            vec![(
                "tmp",
                Data::F32(matmul(
                    n,
                    n,
                    n,
                    |i, k| alpha * a[i * n + k],
                    |k, j| b[k * n + j],
                )),
            )]
        }
        "polybench_3mm_kernel2" => {
            let (cm, d) = (c.f32("C"), c.f32("D"));
            let (nj, nl, nm) = (24, 14, 30);
            vec![(
                "F",
                Data::F32(matmul(
                    nj,
                    nl,
                    nm,
                    |i, k| cm[i * nm + k],
                    |k, j| d[k * nl + j],
                )),
            )]
        }
        "polybench_atax_kernel1" => {
            let (a, x) = (c.f32("A"), c.f32("x"));
            let ny = 30;
            vec![(
                "tmp",
                Data::F32(matmul(40, 1, ny, |i, j| a[i * ny + j], |j, _| x[j])),
            )]
        }
        "polybench_atax_kernel2" => {
            let (a, tmp) = (c.f32("A"), c.f32("tmp"));
            let ny = 30;
            vec![(
                "y",
                Data::F32(matmul(ny, 1, 40, |j, i| a[i * ny + j], |i, _| tmp[i])),
            )]
        }
        "polybench_bicg_kernel1" => {
            let (a, r) = (c.f32("A"), c.f32("r"));
            let ny = 34;
            vec![(
                "s",
                Data::F32(matmul(ny, 1, 48, |j, i| r[i] * a[i * ny + j], |_, _| 1.0)),
            )]
        }
        "polybench_bicg_kernel2" => {
            let (a, p) = (c.f32("A"), c.f32("p"));
            let ny = 34;
            vec![(
                "q",
                Data::F32(matmul(48, 1, ny, |i, j| a[i * ny + j], |j, _| p[j])),
            )]
        }
        "polybench_mvt_kernel1" => {
            let (a, y) = (c.f32("a"), c.f32("y_1"));
            let n = 38;
            let mut x1 = out_f32(c, "x1");
            for i in 0..n {
                for j in 0..n {
                    x1[i] += a[i * n + j] * y[j];
                }
            }
            vec![("x1", Data::F32(x1))]
        }
        "polybench_gesummv" => {
            let (a, b, x) = (c.f32("A"), c.f32("B"), c.f32("x"));
            let (alpha, beta) = (c.float("alpha"), c.float("beta"));
            let n = 36;
            let (mut tmp, mut y) = (out_f32(c, "tmp"), out_f32(c, "y"));
            for i in 0..n {
                for j in 0..n {
                    tmp[i] += a[i * n + j] * x[j];
                    y[i] += b[i * n + j] * x[j];
                }
                y[i] = alpha * tmp[i] + beta * y[i];
            }
            vec![("tmp", Data::F32(tmp)), ("y", Data::F32(y))]
        }
        "polybench_syrk" | "polybench_syr2k" => {
            let (ni, nj) = if c.entry == "polybench_syrk" {
                (20, 24)
            } else {
                (22, 20)
            };
            let a = c.f32("a");
            let b = if c.entry == "polybench_syrk" {
                a
            } else {
                c.f32("b")
            };
            let (alpha, beta) = (c.float("alpha"), c.float("beta"));
            let mut out = out_f32(c, "c");
            for i in 0..ni {
                for j in 0..ni {
                    let mut v = out[i * ni + j] * beta;
                    for k in 0..nj {
                        v += if c.entry == "polybench_syrk" {
                            alpha * a[i * nj + k] * a[j * nj + k]
                        } else {
                            alpha * a[i * nj + k] * b[j * nj + k]
                                + alpha * b[i * nj + k] * a[j * nj + k]
                        };
                    }
                    out[i * ni + j] = v;
                }
            }
            vec![("c", Data::F32(out))]
        }
        "polybench_covar_kernel" => {
            let data = c.f32("data");
            let (m, n) = (20, 24);
            let mut sym = out_f32(c, "symmat");
            for j1 in 0..m {
                for j2 in j1..m {
                    let v: f32 = (0..n).map(|i| data[i * m + j1] * data[i * m + j2]).sum();
                    sym[j1 * m + j2] = v;
                    sym[j2 * m + j1] = v;
                }
            }
            vec![("symmat", Data::F32(sym))]
        }
        "polybench_std_kernel" => {
            let (mean, data) = (c.f32("mean"), c.f32("data"));
            let (m, n) = (18, 24);
            let std = (0..m)
                .map(|j| {
                    let s: f32 = (0..n).map(|i| (data[i * m + j] - mean[j]).powi(2)).sum();
                    let s = ((f64::from(s) / 3_214_212.01) as f32).sqrt();
                    if f64::from(s) <= 0.005 { 1.0 } else { s }
                })
                .collect();
            vec![("std", Data::F32(std))]
        }
        "polybench_convolution2d" => {
            let a = c.f32("A");
            let n = 34;
            let w = [[0.2f32, -0.3, 0.4], [0.5, 0.6, 0.7], [-0.8, -0.9, 0.10]];
            let mut b = out_f32(c, "B");
            for i in 1..n - 1 {
                for j in 1..n - 1 {
                    let mut v = 0.0;
                    for (dj, col) in w.iter().enumerate() {
                        for (di, wt) in col.iter().enumerate() {
                            v += wt * a[(i + di - 1) * n + (j + dj - 1)];
                        }
                    }
                    b[i * n + j] = v;
                }
            }
            vec![("B", Data::F32(b))]
        }
        "polybench_convolution3d" => {
            let a = c.f32("A");
            let n = 12;
            let i = u(c.int("i"));
            let at = |di: usize, dj: usize, dk: usize, j: usize, k: usize| {
                a[(i + di - 1) * n * n + (j + dj - 1) * n + (k + dk - 1)]
            };
            let mut b = out_f32(c, "B");
            for j in 1..n - 1 {
                for k in 1..n - 1 {
                    let f = |di, dj, dk| at(di, dj, dk, j, k);
                    b[i * n * n + j * n + k] =
                        2.0 * f(0, 0, 0) + 4.0 * f(2, 0, 0) + 5.0 * f(0, 0, 0) + 7.0 * f(2, 0, 0)
                            - 8.0 * f(0, 0, 0)
                            + 10.0 * f(2, 0, 0)
                            - 3.0 * f(1, 0, 1)
                            + 6.0 * f(1, 1, 1)
                            - 9.0 * f(1, 2, 1)
                            + 2.0 * f(0, 0, 2)
                            + 4.0 * f(2, 0, 2)
                            + 5.0 * f(0, 1, 2)
                            + 7.0 * f(2, 1, 2)
                            - 8.0 * f(0, 2, 2)
                            + 10.0 * f(2, 2, 2);
                }
            }
            vec![("B", Data::F32(b))]
        }
        "polybench_jacobi2d_kernel1" => {
            let a = c.f32("A");
            let n = 34;
            let mut b = out_f32(c, "B");
            for i in 1..n - 1 {
                for j in 1..n - 1 {
                    b[i * n + j] = 0.2
                        * (a[i * n + j]
                            + a[i * n + j - 1]
                            + a[i * n + j + 1]
                            + a[(i + 1) * n + j]
                            + a[(i - 1) * n + j]);
                }
            }
            vec![("B", Data::F32(b))]
        }
        "polybench_fdtd_step1" => {
            let (fict, hz) = (c.f32("_fict_"), c.f32("hz"));
            let (nx, ny) = (20, 30);
            let mut ey = out_f32(c, "ey");
            for i in 0..nx {
                for j in 0..ny {
                    ey[i * ny + j] = if i == 0 {
                        fict[u(c.int("t"))]
                    } else {
                        ey[i * ny + j] - 0.5 * (hz[i * ny + j] - hz[(i - 1) * ny + j])
                    };
                }
            }
            vec![("ey", Data::F32(ey))]
        }
        "polybench_fdtd_step3" => {
            let (ex, ey) = (c.f32("ex"), c.f32("ey"));
            let (nx, ny) = (20, 30);
            let mut hz = out_f32(c, "hz");
            for i in 0..nx - 1 {
                for j in 0..ny - 1 {
                    hz[i * ny + j] -= 0.7
                        * (ex[i * ny + j + 1] - ex[i * ny + j] + ey[(i + 1) * ny + j]
                            - ey[i * ny + j]);
                }
            }
            vec![("hz", Data::F32(hz))]
        }
        "polybench_adi_kernel1" => {
            let a = c.f32("A");
            let n = 16;
            let (mut b, mut x) = (out_f32(c, "B"), out_f32(c, "X"));
            for i1 in 0..n {
                for i2 in 1..n {
                    let (at, prev) = (i1 * n + i2, i1 * n + i2 - 1);
                    x[at] -= x[prev] * a[at] / b[prev];
                    b[at] -= a[at] * a[at] / b[prev];
                }
            }
            vec![("B", Data::F32(b)), ("X", Data::F32(x))]
        }
        "rodinia_hotspot_calculate_temp" => {
            let (power, temp) = (c.f32("power"), c.f32("temp_src"));
            let (cols, rows) = (u(c.int("grid_cols")), u(c.int("grid_rows")));
            let sdc = c.float("step") / c.float("Cap");
            let (rx, ry, rz) = (
                1.0 / c.float("Rx"),
                1.0 / c.float("Ry"),
                1.0 / c.float("Rz"),
            );
            let mut dst = out_f32(c, "temp_dst");
            for r in 0..rows {
                for col in 0..cols {
                    let t = temp[r * cols + col];
                    let at = |rr: usize, cc: usize| temp[rr * cols + cc];
                    let (n, s) = (at(r.saturating_sub(1), col), at((r + 1).min(rows - 1), col));
                    let (w, e) = (at(r, col.saturating_sub(1)), at(r, (col + 1).min(cols - 1)));
                    let t64 = f64::from(t);
                    let v = f64::from(power[r * cols + col])
                        + (f64::from(s + n) - 2.0 * t64) * f64::from(ry)
                        + (f64::from(e + w) - 2.0 * t64) * f64::from(rx)
                        + f64::from((80.0 - t) * rz);
                    dst[r * cols + col] = (t64 + f64::from(sdc) * v) as f32;
                }
            }
            vec![("temp_dst", Data::F32(dst))]
        }
        "rodinia_pathfinder_dynproc" => {
            let (wall, src) = (c.i32("gpuWall"), c.i32("gpuSrc"));
            let (cols, start) = (u(c.int("cols")), u(c.int("startStep")));
            let mut prev = src.to_vec();
            for i in 0..u(c.int("iteration")) {
                prev = (0..cols)
                    .map(|x| {
                        let m = prev[x.saturating_sub(1)]
                            .min(prev[x])
                            .min(prev[(x + 1).min(cols - 1)]);
                        m + wall[cols * (start + i) + x]
                    })
                    .collect();
            }
            vec![("gpuResults", Data::I32(prev))]
        }
        "rodinia_needle_shared_1" => {
            let reference = c.i32("referrence");
            let (cols, penalty, diag) = (u(c.int("cols")), c.int("penalty") as i32, u(c.int("i")));
            let mut m = c.i32("matrix_cuda").to_vec();
            for bx in 0..grid[0] {
                let (r0, c0) = (16 * (diag - 1 - bx), 16 * bx);
                for y in 1..=16 {
                    for x in 1..=16 {
                        let at = (r0 + y) * cols + c0 + x;
                        let diagonal = m[at - cols - 1] + reference[at];
                        m[at] = diagonal
                            .max(m[at - 1] - penalty)
                            .max(m[at - cols] - penalty);
                    }
                }
            }
            vec![("matrix_cuda", Data::I32(m))]
        }
        "rodinia_bfs_kernel" => {
            let (nodes, edges, visited) = (
                c.i32("g_graph_nodes"),
                c.i32("g_graph_edges"),
                c.u8("g_graph_visited"),
            );
            let mut mask = c.u8("g_graph_mask").to_vec();
            let mut updating = c.u8("g_updating_graph_mask").to_vec();
            let mut cost = c.i32("g_cost").to_vec();
            let frontier: Vec<usize> = (0..mask.len()).filter(|&t| mask[t] != 0).collect();
            for tid in frontier {
                mask[tid] = 0;
                let (start, count) = (
                    u(i64::from(nodes[2 * tid])),
                    u(i64::from(nodes[2 * tid + 1])),
                );
                for &id in &edges[start..start + count] {
                    let id = u(i64::from(id));
                    if visited[id] == 0 {
                        cost[id] = cost[tid] + 1;
                        updating[id] = 1;
                    }
                }
            }
            vec![
                ("g_graph_mask", Data::U8(mask)),
                ("g_updating_graph_mask", Data::U8(updating)),
                ("g_cost", Data::I32(cost)),
            ]
        }
        "rodinia_bpnn_layerforward" => {
            let input = c.f32("input_cuda");
            let hid = u(c.int("hid"));
            let mut ih = out_f32(c, "input_hidden_cuda");
            let mut sums = out_f32(c, "hidden_partial_sum");
            for by in 0..grid[1] {
                let index = |ty: usize, tx: usize| {
                    (hid + 1) * 16 * by + (hid + 1) * ty + tx + 1 + (hid + 1)
                };
                let mut w = [[0.0f32; 16]; 16];
                for ty in 0..16 {
                    for tx in 0..16 {
                        w[ty][tx] = ih[index(ty, tx)] * input[16 * by + ty + 1];
                    }
                }
                for i in 1..=4 {
                    let p = 1 << i;
                    for ty in (0..16).step_by(p) {
                        for tx in 0..16 {
                            w[ty][tx] += w[ty + p / 2][tx];
                        }
                    }
                }
                for ty in 0..16 {
                    for tx in 0..16 {
                        ih[index(ty, tx)] = w[ty][tx];
                    }
                    sums[by * hid + ty] = w[0][ty];
                }
            }
            vec![
                ("input_hidden_cuda", Data::F32(ih)),
                ("hidden_partial_sum", Data::F32(sums)),
            ]
        }
        "rodinia_lud_diagonal" => {
            let (dim, off) = (u(c.int("matrix_dim")), u(c.int("offset")));
            let mut m = out_f32(c, "m");
            let mut s = [[0.0f32; 16]; 16];
            for i in 0..16 {
                for t in 0..16 {
                    s[i][t] = m[(off + i) * dim + off + t];
                }
            }
            for i in 0..15 {
                for t in i + 1..16 {
                    for j in 0..i {
                        s[t][i] -= s[t][j] * s[j][i];
                    }
                    s[t][i] /= s[i][i];
                }
                for t in i + 1..16 {
                    for j in 0..=i {
                        s[i + 1][t] -= s[i + 1][j] * s[j][t];
                    }
                }
            }
            for i in 1..16 {
                for t in 0..16 {
                    m[(off + i) * dim + off + t] = s[i][t];
                }
            }
            vec![("m", Data::F32(m))]
        }
        "rodinia_gaussian_fan1" => {
            let a = c.f32("a_cuda");
            let (size, t) = (u(c.int("Size")), u(c.int("t")));
            let mut m = out_f32(c, "m_cuda");
            for x in 0..size - 1 - t {
                m[size * (x + t + 1) + t] = a[size * (x + t + 1) + t] / a[size * t + t];
            }
            vec![("m_cuda", Data::F32(m))]
        }
        "rodinia_gaussian_fan2" => {
            let m = c.f32("m_cuda");
            let (size, t) = (u(c.int("Size")), u(c.int("t")));
            let (mut a, mut b) = (out_f32(c, "a_cuda"), out_f32(c, "b_cuda"));
            let row_t: Vec<f32> = a[size * t..size * (t + 1)].to_vec();
            let bt = b[t];
            for x in 0..size - 1 - t {
                let f = m[size * (x + 1 + t) + t];
                for y in 0..size - t {
                    a[size * (x + 1 + t) + y + t] -= f * row_t[y + t];
                }
                b[x + 1 + t] -= f * bt;
            }
            vec![("a_cuda", Data::F32(a)), ("b_cuda", Data::F32(b))]
        }
        "rodinia_srad" => {
            let img = c.f32("d_I");
            let (i_n, i_s, j_e, j_w) = (c.i32("d_iN"), c.i32("d_iS"), c.i32("d_jE"), c.i32("d_jW"));
            let (nr, ne) = (u(c.int("d_Nr")), u(c.int("d_Ne")));
            let q0 = c.float("d_q0sqr");
            let mut outs: Vec<Vec<f32>> = ["d_dN", "d_dS", "d_dW", "d_dE", "d_c"]
                .iter()
                .map(|n| out_f32(c, n))
                .collect();
            for ei in 0..ne {
                let (mut row, mut col) = (((ei + 1) % nr).wrapping_sub(1), (ei + 1) / nr);
                if (ei + 1) % nr == 0 {
                    row = nr - 1;
                    col -= 1;
                }
                let jc = img[ei];
                let d = [
                    img[u(i64::from(i_n[row])) + nr * col] - jc,
                    img[u(i64::from(i_s[row])) + nr * col] - jc,
                    img[row + nr * u(i64::from(j_w[col]))] - jc,
                    img[row + nr * u(i64::from(j_e[col]))] - jc,
                ];
                let g2 = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + d[3] * d[3]) / (jc * jc);
                let l = (d[0] + d[1] + d[2] + d[3]) / jc;
                let num = 0.5 * f64::from(g2) - (1.0 / 16.0) * f64::from(l * l);
                let den = 1.0 + 0.25 * f64::from(l);
                let qsqr = (num / (den * den)) as f32;
                let den = (qsqr - q0) / (q0 * (1.0 + q0));
                let cc = (1.0 / (1.0 + f64::from(den))) as f32;
                for (k, v) in d.iter().enumerate() {
                    outs[k][ei] = *v;
                }
                outs[4][ei] = cc.clamp(0.0, 1.0);
            }
            let mut outs = outs.into_iter();
            let mut next = || Data::F32(outs.next().unwrap());
            vec![
                ("d_dN", next()),
                ("d_dS", next()),
                ("d_dW", next()),
                ("d_dE", next()),
                ("d_c", next()),
            ]
        }
        "rodinia_nn_euclid" => {
            let loc = c.f32("d_locations");
            let (lat, lng) = (c.float("lat"), c.float("lng"));
            let d = loc
                .chunks(2)
                .map(|p| ((lat - p[0]) * (lat - p[0]) + (lng - p[1]) * (lng - p[1])).sqrt())
                .collect();
            vec![("d_distances", Data::F32(d))]
        }
        "rodinia_kmeans_point" => {
            let (f, cl) = (c.f32("features"), c.f32("clusters"));
            let (nf, np, nc) = (
                u(c.int("nfeatures")),
                u(c.int("npoints")),
                u(c.int("nclusters")),
            );
            let membership = (0..np)
                .map(|p| {
                    let mut best = (-1, f32::MAX);
                    for i in 0..nc {
                        let d: f32 = (0..nf)
                            .map(|j| (f[p + j * np] - cl[i * nf + j]).powi(2))
                            .sum();
                        if d < best.1 {
                            best = (i as i32, d);
                        }
                    }
                    best.0
                })
                .collect();
            vec![("membership", Data::I32(membership))]
        }
        "rodinia_streamcluster_compute_cost" => {
            let (w, assign, cost) = (c.f32("p_weight"), c.i64("p_assign"), c.f32("p_cost"));
            let (coord, table) = (c.f32("coord_d"), c.i32("center_table_d"));
            let n = |s: &str| u(c.int(s));
            let (num, dim, x, k, stride) = (n("num"), n("dim"), n("x"), n("K"), n("stride"));
            let mut work = out_f32(c, "work_mem_d");
            let mut switch = c.u8("switch_membership_d").to_vec();
            for tid in 0..num {
                let dist: f32 = (0..dim)
                    .map(|i| (coord[i * num + tid] - coord[i * num + x]).powi(2))
                    .sum();
                let x_cost = dist * w[tid];
                if x_cost < cost[tid] {
                    switch[tid] = 1;
                    work[tid * stride + k] += x_cost - cost[tid];
                } else {
                    work[tid * stride + u(i64::from(table[u(assign[tid])]))] += cost[tid] - x_cost;
                }
            }
            vec![
                ("work_mem_d", Data::F32(work)),
                ("switch_membership_d", Data::U8(switch)),
            ]
        }
        "samples_vector_add" => {
            let (a, b) = (c.f32("A"), c.f32("B"));
            vec![(
                "C",
                Data::F32(a.iter().zip(b).map(|(x, y)| x + y + 0.0).collect()),
            )]
        }
        "samples_matrix_mul_tiled" => {
            let (a, b) = (c.f32("A"), c.f32("B"));
            let (wa, wb) = (u(c.int("wA")), u(c.int("wB")));
            let rows = 16 * grid[1];
            vec![(
                "C",
                Data::F32(matmul(
                    rows,
                    wb,
                    wa,
                    |i, k| a[i * wa + k],
                    |k, j| b[k * wb + j],
                )),
            )]
        }
        "samples_transpose_coalesced" => {
            let idata = c.f32("idata");
            let (w, h) = (u(c.int("width")), u(c.int("height")));
            let mut o = out_f32(c, "odata");
            for y in 0..h {
                for x in 0..w {
                    o[x * h + y] = idata[y * w + x];
                }
            }
            vec![("odata", Data::F32(o))]
        }
        "samples_reduce7" => {
            let x = c.f32("g_idata");
            let step = 2 * 256 * grid[0];
            let mut sums = vec![0.0f32; grid[0]];
            for (i, v) in x.iter().enumerate() {
                sums[(i % step) / 512] += v;
            }
            vec![("g_odata", Data::F32(sums))]
        }
        "samples_scan_exclusive_shared" => {
            let src = c.u32("d_Src");
            let seg = u(c.int("size"));
            let mut dst = Vec::with_capacity(src.len());
            for chunk in src.chunks(seg) {
                let mut acc = 0u32;
                for v in chunk {
                    dst.push(acc);
                    acc = acc.wrapping_add(*v);
                }
            }
            vec![("d_Dst", Data::U32(dst))]
        }
        "samples_histogram256" => {
            let data = c.u32("d_Data");
            let step = 192 * grid[0];
            let mut hist = vec![0u32; grid[0] * 256];
            for (p, w) in data.iter().enumerate() {
                let b = (p % step) / 192;
                for shift in [0, 8, 16, 24] {
                    hist[b * 256 + ((w >> shift) & 0xff) as usize] += 1;
                }
            }
            vec![("d_PartialHistograms", Data::U32(hist))]
        }
        "samples_black_scholes_float2" => {
            let (s_, x_, t_) = (
                c.f32("d_StockPrice"),
                c.f32("d_OptionStrike"),
                c.f32("d_OptionYears"),
            );
            let (r, v) = (
                f64::from(c.float("Riskfree")),
                f64::from(c.float("Volatility")),
            );
            let (mut call, mut put) = (out_f32(c, "d_CallResult"), out_f32(c, "d_PutResult"));
            let cnd = |d: f64| {
                let k = 1.0 / (1.0 + 0.231_641_9 * d.abs());
                let poly = k
                    * (0.319_381_53
                        + k * (-0.356_563_782
                            + k * (1.781_477_937 + k * (-1.821_255_978 + k * 1.330_274_429))));
                let c = 0.398_942_280_401_432_7 * (-0.5 * d * d).exp() * poly;
                if d > 0.0 { 1.0 - c } else { c }
            };
            for i in 0..2 * (u(c.int("optN")) / 2) {
                let (s, x, t) = (f64::from(s_[i]), f64::from(x_[i]), f64::from(t_[i]));
                let sqrt_t = t.sqrt();
                let d1 = ((s / x).ln() + (r + 0.5 * v * v) * t) / (v * sqrt_t);
                let d2 = d1 - v * sqrt_t;
                let exp_rt = (-r * t).exp();
                call[i] = (s * cnd(d1) - x * exp_rt * cnd(d2)) as f32;
                put[i] = (x * exp_rt * (1.0 - cnd(d2)) - s * (1.0 - cnd(d1))) as f32;
            }
            vec![
                ("d_CallResult", Data::F32(call)),
                ("d_PutResult", Data::F32(put)),
            ]
        }
        "samples_monte_carlo_one_block_per_option" => {
            let states = c.u32("rngStates");
            let (s_, x_, mu_, v_) = (
                c.f32("d_S"),
                c.f32("d_X"),
                c.f32("d_MuByT"),
                c.f32("d_VBySqrtT"),
            );
            let path_n = u(c.int("pathN"));
            let mut out = out_f32(c, "d_CallValue");
            let uniform = |state: &mut u32| {
                *state ^= *state << 13;
                *state ^= *state >> 17;
                *state ^= *state << 5;
                (*state >> 8) as f32 * (1.0 / 16_777_216.0) + 0.5 / 16_777_216.0
            };
            for opt in 0..u(c.int("optionN")) {
                let (mut sum, mut sum2) = (0.0f64, 0.0f64);
                for t in 0..block[0] {
                    let mut state = states[opt * block[0] + t];
                    for _ in (t..path_n).step_by(128) {
                        let (u1, u2) = (uniform(&mut state), uniform(&mut state));
                        let r = (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos();
                        let v = (f64::from(s_[opt]) * f64::from(mu_[opt] + v_[opt] * r).exp()
                            - f64::from(x_[opt]))
                        .max(0.0);
                        sum += v;
                        sum2 += v * v;
                    }
                }
                out[2 * opt] = sum as f32;
                out[2 * opt + 1] = sum2 as f32;
            }
            vec![("d_CallValue", Data::F32(out))]
        }
        "samples_fwt_batch2" => {
            let input = c.f32("d_Input");
            let stride = u(c.int("stride"));
            let n = block[0] * grid[0] * 4;
            let mut out = out_f32(c, "d_Output");
            for y in 0..grid[1] {
                let (src, dst) = (&input[y * n..][..n], &mut out[y * n..][..n]);
                for pos in 0..n / 4 {
                    let lo = pos & (stride - 1);
                    let i0 = ((pos - lo) << 2) + lo;
                    let (i1, i2, i3) = (i0 + stride, i0 + 2 * stride, i0 + 3 * stride);
                    let (d0, d1, d2, d3) = (
                        src[i0] + src[i2],
                        src[i1] + src[i3],
                        src[i0] - src[i2],
                        src[i1] - src[i3],
                    );
                    dst[i0] = d0 + d1;
                    dst[i1] = d0 - d1;
                    dst[i2] = d2 + d3;
                    dst[i3] = d2 - d3;
                }
            }
            vec![("d_Output", Data::F32(out))]
        }
        "samples_fwt_modulate" => {
            let b = c.f32("d_B");
            let rcp = 1.0 / c.int("N") as f32;
            let mut a = out_f32(c, "d_A");
            for (x, y) in a.iter_mut().zip(b) {
                *x *= y * rcp;
            }
            vec![("d_A", Data::F32(a))]
        }
        "samples_convolution_rows" => {
            let src = c.f32("d_Src");
            let (w, pitch) = (u(c.int("imageW")), u(c.int("pitch")));
            let k = [
                0.0010f32, 0.0040, 0.0110, 0.0260, 0.0500, 0.0810, 0.1100, 0.1290, 0.1360, 0.1290,
                0.1100, 0.0810, 0.0500, 0.0260, 0.0110, 0.0040, 0.0010,
            ];
            let mut dst = out_f32(c, "d_Dst");
            for y in 0..4 * grid[1] {
                for x in 0..128 * grid[0] {
                    let mut sum = 0.0f32;
                    for j in -8i64..=8 {
                        let xx = x as i64 + j;
                        let v = if xx >= 0 && (xx as usize) < w {
                            src[y * pitch + xx as usize]
                        } else {
                            0.0
                        };
                        sum = k[(8 - j) as usize].mul_add(v, sum);
                    }
                    dst[y * pitch + x] = sum;
                }
            }
            vec![("d_Dst", Data::F32(dst))]
        }
        "samples_nbody_integrate_bodies" => {
            let old = c.f32("oldPos");
            let (dt, damping) = (c.float("deltaTime"), c.float("damping"));
            let n = u(c.int("deviceNumBodies"));
            let tiles = u(c.int("numTiles")) * block[0];
            let (mut pos, mut vel) = (out_f32(c, "newPos"), out_f32(c, "vel"));
            for i in 0..n {
                let bi = &old[4 * i..4 * i + 4];
                let mut acc = [0.0f32; 3];
                for j in 0..tiles {
                    let bj = &old[4 * j..4 * j + 4];
                    let r = [bj[0] - bi[0], bj[1] - bi[1], bj[2] - bi[2]];
                    let dist = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + 0.01;
                    let inv = 1.0 / dist.sqrt();
                    let s = bj[3] * inv * inv * inv;
                    for d in 0..3 {
                        acc[d] += r[d] * s;
                    }
                }
                for d in 0..3 {
                    let v = (vel[4 * i + d] + acc[d] * dt) * damping;
                    vel[4 * i + d] = v;
                    pos[4 * i + d] = bi[d] + v * dt;
                }
                pos[4 * i + 3] = bi[3];
            }
            vec![("newPos", Data::F32(pos)), ("vel", Data::F32(vel))]
        }
        "samples_particles_calc_hash" => {
            let p = c.f32("pos");
            let hash = p
                .chunks(4)
                .map(|q| {
                    let cell = |v: f32| (((v + 1.0) / 0.25).floor() as i32 & 7) as u32;
                    cell(q[2]) * 64 + cell(q[1]) * 8 + cell(q[0])
                })
                .collect();
            let index = (0..p.len() / 4).map(|i| i as u32).collect();
            vec![
                ("gridParticleHash", Data::U32(hash)),
                ("gridParticleIndex", Data::U32(index)),
            ]
        }
        "samples_particles_find_cell_start" => {
            let (hash, index) = (c.u32("gridParticleHash"), c.u32("gridParticleIndex"));
            let (old_pos, old_vel) = (c.f32("oldPos"), c.f32("oldVel"));
            let n = hash.len();
            let (mut start, mut end) = (c.u32("cellStart").to_vec(), c.u32("cellEnd").to_vec());
            let (mut pos, mut vel) = (out_f32(c, "sortedPos"), out_f32(c, "sortedVel"));
            for i in 0..n {
                let h = hash[i] as usize;
                if i == 0 || hash[i] != hash[i - 1] {
                    start[h] = i as u32;
                    if i > 0 {
                        end[hash[i - 1] as usize] = i as u32;
                    }
                }
                if i == n - 1 {
                    end[h] = i as u32 + 1;
                }
                let s = index[i] as usize;
                pos[4 * i..4 * i + 4].copy_from_slice(&old_pos[4 * s..4 * s + 4]);
                vel[4 * i..4 * i + 4].copy_from_slice(&old_vel[4 * s..4 * s + 4]);
            }
            vec![
                ("cellStart", Data::U32(start)),
                ("cellEnd", Data::U32(end)),
                ("sortedPos", Data::F32(pos)),
                ("sortedVel", Data::F32(vel)),
            ]
        }
        "samples_mandelbrot" => {
            let n = |s: &str| c.int(s) as i32;
            let (w, h, crunch, frame) = (n("imageW"), n("imageH"), n("crunch"), n("frame"));
            let (x_off, y_off, scale) = (c.float("xOff"), c.float("yOff"), c.float("scale"));
            let colors = [n("colorR"), n("colorG"), n("colorB")];
            let mut dst = c.u8("dst").to_vec();
            for iy in 0..h {
                for ix in 0..w {
                    let (xc, yc) = (
                        (ix as f32).mul_add(scale, x_off),
                        (iy as f32).mul_add(scale, y_off),
                    );
                    let (mut x, mut y, mut xx, mut yy) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
                    let mut i = crunch;
                    loop {
                        i -= 1;
                        if i == 0 || xx + yy >= 4.0 {
                            break;
                        }
                        y = x * y * 2.0 + yc;
                        x = xx - yy + xc;
                        yy = y * y;
                        xx = x * x;
                    }
                    let m = if i > 0 { crunch - i } else { 0 };
                    let p = 4 * (w * iy + ix) as usize;
                    for ch in 0..3 {
                        let color = i32::from((m * colors[ch]) as u8);
                        dst[p + ch] = if frame == 0 {
                            color as u8
                        } else {
                            ((i32::from(dst[p + ch]) * frame + color + (frame + 1) / 2)
                                / (frame + 1)) as u8
                        };
                    }
                    if frame == 0 {
                        dst[p + 3] = 0;
                    }
                }
            }
            vec![("dst", Data::U8(dst))]
        }
        "samples_sobel" => {
            let img = c.u8("img");
            let (pitch, w, h) = (u(c.int("Pitch")), c.int("w"), c.int("h"));
            let scale = c.float("fScale");
            let at = |x: i64, y: i64| i32::from(img[u(y.clamp(0, h - 1) * w + x.clamp(0, w - 1))]);
            let mut out = c.u8("pSobelOriginal").to_vec();
            for y in 0..grid[0] as i64 {
                for x in 0..w {
                    let p = |dx: i64, dy: i64| at(x + dx, y + dy);
                    let horz =
                        p(1, -1) + 2 * p(1, 0) + p(1, 1) - p(-1, -1) - 2 * p(-1, 0) - p(-1, 1);
                    let vert =
                        p(-1, -1) + 2 * p(0, -1) + p(1, -1) - p(-1, 1) - 2 * p(0, 1) - p(1, 1);
                    let sum = (scale * (horz.abs() + vert.abs()) as f32) as i16;
                    out[u(y) * pitch + u(x)] = sum.clamp(0, 255) as u8;
                }
            }
            vec![("pSobelOriginal", Data::U8(out))]
        }
        "ggml_argsort_f32_i32_asc" => {
            let (x, ncols) = (c.f32("x"), u(c.int("ncols")));
            let mut dst = Vec::new();
            for row in x.chunks(ncols) {
                let mut idx: Vec<i32> = (0..ncols as i32).collect();
                idx.sort_by(|a, b| row[*a as usize].total_cmp(&row[*b as usize]));
                dst.extend(idx);
            }
            vec![("dst", Data::I32(dst))]
        }
        "ggml_fwht_f32_128" => {
            let src = c.f32("src");
            let scale = c.float("scale");
            let mut dst = out_f32(c, "dst");
            for r in 0..u(c.int("n_rows")) {
                let mut reg = [[0.0f32; 4]; 32];
                for lane in 0..32 {
                    for i in 0..4 {
                        reg[lane][i] = src[r * 128 + i * 32 + lane] * scale;
                    }
                }
                let mut h = 1;
                while h < 32 {
                    let prev = reg;
                    for lane in 0..32 {
                        for j in 0..4 {
                            let (v, v2) = (prev[lane][j], prev[lane ^ h][j]);
                            reg[lane][j] = if lane & h == 0 { v + v2 } else { v2 - v };
                        }
                    }
                    h *= 2;
                }
                for lane in reg.iter_mut() {
                    for step in [1, 2] {
                        for j in (0..4).step_by(2 * step) {
                            for k in 0..step {
                                let (a, b) = (lane[j + k], lane[j + k + step]);
                                lane[j + k] = a + b;
                                lane[j + k + step] = a - b;
                            }
                        }
                    }
                }
                for lane in 0..32 {
                    for i in 0..4 {
                        dst[r * 128 + i * 32 + lane] = reg[lane][i];
                    }
                }
            }
            vec![("dst", Data::F32(dst))]
        }
        "lscat_bitonic_sort_block" => {
            // Each block sorts its 256 elements ascending (the tail padded with +inf).
            let mut values = out_f32(c, "values");
            for chunk in values.chunks_mut(block[0]) {
                chunk.sort_by(f32::total_cmp);
            }
            vec![("values", Data::F32(values))]
        }
        other => panic!("{other}: no reference"),
    }
}
