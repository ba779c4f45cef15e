//! CUPTI: where each packaging puts libcupti, its SONAME per CUDA major, and
//! what needs it (`rules/cupti.toml`). Placeholder until the CUPTI helper lands.

#[derive(Clone, Debug, Default)]
pub struct CuptiKnowledge {}

// The area convention (see knowledge/mod.rs); placeholder until this area lands.
impl CuptiKnowledge {
    pub fn from_toml(value: toml::Value) -> Result<Self, String> {
        let _ = value;
        Ok(CuptiKnowledge::default())
    }

    pub fn extend(&mut self, other: Self) {
        let _ = other;
    }
}
