//! The image as the rules and the inventory read it: config (env, labels, history), each layer with its
//! digests, bytes added and wasted and the history line that made it, and the merged filesystem.

use serde::Serialize;

use super::config::ImageConfig;
use super::fs::{LayerUsage, MergedFs};
use super::layer::{Compression, LayerContents};
use super::source::LoadedImage;

/// One layer as applied.
#[derive(Clone, Debug, Serialize)]
pub struct LayerReport {
    pub index: usize,
    pub blob_digest: String,
    pub diff_id: String,
    pub compression: Compression,
    pub blob_size: u64,
    pub tar_size: u64,
    #[serde(flatten)]
    pub usage: LayerUsage,
    /// The history `created_by` of the instruction that made this layer.
    pub created_by: Option<String>,
    /// Entry names that tried to leave the root, kept clamped inside it.
    pub clamped_names: Vec<String>,
}

/// Everything read from one image.
pub struct ImageReport {
    pub reference: String,
    pub config: ImageConfig,
    pub layers: Vec<LayerReport>,
    pub fs: MergedFs,
}

impl ImageReport {
    /// Applies the loaded layers in order.
    pub fn build(reference: &str, image: LoadedImage) -> ImageReport {
        let LoadedImage { config, layers } = image;
        let mut fs = MergedFs::new();
        let mut headers: Vec<(usize, LayerContents)> = Vec::with_capacity(layers.len());
        for (index, mut layer) in layers.into_iter().enumerate() {
            fs.apply(index, &layer.entries);
            layer.entries = Vec::new();
            headers.push((index, layer));
        }
        let history = config.layer_history(headers.len());
        let layers = headers
            .into_iter()
            .zip(history)
            .map(|((index, layer), history)| LayerReport {
                index,
                blob_digest: layer.blob_digest,
                diff_id: layer.diff_id,
                compression: layer.compression,
                blob_size: layer.blob_size,
                tar_size: layer.tar_size,
                usage: fs.usage().get(index).cloned().unwrap_or_default(),
                created_by: history.map(|entry| entry.created_by.clone()),
                clamped_names: layer.clamped_names,
            })
            .collect();
        ImageReport {
            reference: reference.to_string(),
            config,
            layers,
            fs,
        }
    }

    pub fn bytes_added(&self) -> u64 {
        self.layers
            .iter()
            .map(|layer| layer.usage.bytes_added)
            .sum()
    }

    pub fn bytes_wasted(&self) -> u64 {
        self.layers
            .iter()
            .map(|layer| layer.usage.bytes_wasted)
            .sum()
    }
}
