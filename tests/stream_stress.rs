//! Many threads, many streams, random work: 4 threads each run 200 random operations (copies
//! in and out, launches, dropping and reallocating a buffer) on buffers of their own, each on a
//! random one of 3 streams shared by all threads, on the asynchronous emulator. Every read, and
//! the final contents, must equal a sequential model of the thread's program order: the access
//! logs alone order the work across streams. A watchdog fails the test on a deadlock.

// A test fails by panicking; the house rule against panics is for paths user input reaches.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::launch_suite::{ADD_F32, NEG_F32, bind};
use jitseam::{Device, DeviceBound, DeviceBuffer, Erased, Kernel, Stream};

const THREADS: usize = 4;
const STREAMS: usize = 3;
const OPS: usize = 200;
const BUFFERS: usize = 4;
const N: usize = 300;

/// xorshift64*: a reproducible stream of numbers per thread.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

struct Kernels {
    add: Kernel<Erased, DeviceBound>,
    neg: Kernel<Erased, DeviceBound>,
}

fn worker(device: &Device, streams: &[Stream], kernels: &Kernels, seed: u64) {
    let mut rng = Rng(seed);
    let mut model: Vec<Vec<f32>> = (0..BUFFERS).map(|b| vec![b as f32; N]).collect();
    let mut buffers: Vec<Option<DeviceBuffer<f32>>> = model
        .iter()
        .map(|values| Some(device.upload(values).unwrap()))
        .collect();
    for step in 0..OPS {
        let stream = &streams[rng.below(STREAMS)];
        let target = rng.below(BUFFERS);
        match rng.below(6) {
            0 => {
                let values: Vec<f32> = (0..N)
                    .map(|i| (seed as usize * 7 + step * 3 + i) as f32)
                    .collect();
                let buffer = buffers[target].as_mut().unwrap();
                stream.write_from(buffer, &values).unwrap();
                model[target] = values;
            }
            1 | 2 => {
                let (a, b) = (rng.below(BUFFERS), rng.below(BUFFERS));
                if a == target || b == target {
                    continue;
                }
                let mut out = buffers[target].take().unwrap();
                {
                    let (x, y) = (buffers[a].as_ref().unwrap(), buffers[b].as_ref().unwrap());
                    kernels
                        .add
                        .launch(
                            stream,
                            &[x.into(), y.into()],
                            &mut [(&mut out).into()],
                            &[N],
                            &[],
                        )
                        .unwrap();
                }
                buffers[target] = Some(out);
                model[target] = model[a].iter().zip(&model[b]).map(|(x, y)| x + y).collect();
            }
            3 => {
                let a = rng.below(BUFFERS);
                if a == target {
                    continue;
                }
                let mut out = buffers[target].take().unwrap();
                kernels
                    .neg
                    .launch(
                        stream,
                        &[buffers[a].as_ref().unwrap().into()],
                        &mut [(&mut out).into()],
                        &[N],
                        &[],
                    )
                    .unwrap();
                buffers[target] = Some(out);
                model[target] = model[a].iter().map(|x| -x).collect();
            }
            4 => {
                let got = stream.read(buffers[target].as_ref().unwrap()).unwrap();
                assert_eq!(
                    got, model[target],
                    "seed {seed}, step {step}: read of buffer {target}"
                );
            }
            _ => {
                // Drop under whatever is queued on it, and reallocate with the same contents.
                buffers[target] = None;
                let mut fresh = device.alloc::<f32>(N).unwrap();
                stream.write_from(&mut fresh, &model[target]).unwrap();
                buffers[target] = Some(fresh);
            }
        }
    }
    for (index, buffer) in buffers.iter().enumerate() {
        let stream = &streams[index % STREAMS];
        let got = stream.read(buffer.as_ref().unwrap()).unwrap();
        assert_eq!(
            got, model[index],
            "seed {seed}: final contents of buffer {index}"
        );
    }
}

#[test]
fn random_work_on_shared_streams_matches_a_sequential_model() {
    let (done, finished) = mpsc::channel();
    let runner = std::thread::spawn(move || {
        let device = Device::emulator();
        let streams: Vec<Stream> = (0..STREAMS).map(|_| device.new_stream().unwrap()).collect();
        let kernels = Kernels {
            add: bind(&device, ADD_F32),
            neg: bind(&device, NEG_F32),
        };
        std::thread::scope(|scope| {
            for thread in 0..THREADS {
                let (device, streams, kernels) = (&device, &streams, &kernels);
                scope.spawn(move || worker(device, streams, kernels, 0x9e37_79b9 + thread as u64));
            }
        });
        for stream in &streams {
            stream.synchronize().unwrap();
        }
        let _ = done.send(());
    });
    match finished.recv_timeout(Duration::from_secs(300)) {
        Ok(()) => runner.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The runner panicked: surface its message.
            if let Err(panic) = runner.join() {
                std::panic::resume_unwind(panic);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("no progress in 300 s: a deadlock between streams, events or locks")
        }
    }
}
