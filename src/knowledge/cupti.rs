//! CUPTI: where each packaging puts libcupti, its SONAME per CUDA major, and
//! what needs it (`rules/cupti.toml`). Placeholder until the CUPTI helper lands.

#[derive(Clone, Debug, Default)]
pub struct CuptiKnowledge {}
