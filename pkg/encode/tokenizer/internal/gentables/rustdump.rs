// Dumps the Rust standard library's per-character data that the Hugging Face `tokenizers` crate
// relies on (char::to_lowercase, char::is_whitespace) so that gentables can compile it into Go
// tables. Build and run: rustc -O rustdump.rs -o /tmp/rustdump && /tmp/rustdump > rust_std.txt
fn main() {
    println!("# rustc std char data, Unicode {:?}", char::UNICODE_VERSION);
    for cp in 0u32..=0x10FFFF {
        let c = match char::from_u32(cp) {
            Some(c) => c,
            None => continue,
        };
        let lower: Vec<char> = c.to_lowercase().collect();
        if lower.len() != 1 || lower[0] != c {
            let hex: Vec<String> = lower.iter().map(|l| format!("{:X}", *l as u32)).collect();
            println!("L {:X} {}", cp, hex.join(" "));
        }
        if c.is_whitespace() {
            println!("W {:X}", cp);
        }
    }
}
