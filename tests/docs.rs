//! The README is part of the product: its rule table lists every registered
//! rule, and its knowledge-override example really works.

use cudalint::engine::{all_rule_metas, Engine, EngineOptions};
use cudalint::knowledge::Knowledge;
use cudalint::source::SourceFile;

const README: &str = include_str!("../README.md");

#[test]
fn the_readme_rule_table_lists_every_rule_with_its_name_and_severity() {
    for meta in all_rule_metas().into_iter().filter(|m| m.code != "CU000") {
        let row = format!(
            "| {} | {} | {} |",
            meta.code, meta.name, meta.default_severity
        );
        assert!(README.contains(&row), "README lacks the row `{row} …`");
    }
}

#[test]
fn the_readme_mirror_example_makes_a_mirrored_cuda_image_known() {
    let section = &README[README.find("## Knowledge").expect("a Knowledge section")..];
    let start = section.find("```toml\n").expect("a toml example") + "```toml\n".len();
    let example = &section[start..start + section[start..].find("```").expect("closed")];

    let mut knowledge = Knowledge::embedded().expect("embedded knowledge loads");
    knowledge
        .merge_text("README.md", example)
        .expect("the README example is valid knowledge");
    let dockerfile = SourceFile::new(
        "Dockerfile",
        "FROM registry.example.com/mirror/nvidia/cuda:12.8.1-devel-ubuntu22.04\nCMD [\"python3\"]\n",
    );
    let lint = |knowledge: Knowledge| {
        let engine = Engine::new(EngineOptions {
            knowledge,
            ..EngineOptions::default()
        });
        engine
            .lint_source(&dockerfile)
            .into_iter()
            .map(|finding| finding.code)
            .collect::<Vec<_>>()
    };
    // Without the mirror the image is unknown; with it, it is a devel image.
    assert!(!lint(Knowledge::embedded().unwrap()).contains(&"CU101"));
    assert!(lint(knowledge).contains(&"CU101"));
}
