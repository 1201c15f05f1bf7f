//! Entry point: the sandbox page in the browser, the `kubeloop` CLI natively.

#[cfg(target_arch = "wasm32")]
fn main() {
    // In the simulation's worker the module only answers requests (src/ui/port.rs).
    if kubeloop::ui::port::in_worker() {
        return;
    }
    kubeloop::ui::start();
}

#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    // `args_os`: an argument that is not UTF-8 must not panic the CLI.
    let args = kubeloop::cli::args_from_os(std::env::args_os().skip(1));
    std::process::exit(kubeloop::cli::main(&args));
}
