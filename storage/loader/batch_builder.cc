#include "storage/loader/batch_builder.h"

#include <algorithm>
#include <numeric>
#include <string>

namespace dljob::storage::loader {

std::vector<ReadRun> PlanReads(std::span<const RecordRef> refs, std::span<const uint64_t> offsets,
                               std::span<const uint64_t> sizes, const ReadOptions& options) {
  std::vector<size_t> order(refs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (refs[a].shard != refs[b].shard) return refs[a].shard < refs[b].shard;
    return offsets[a] < offsets[b];
  });
  std::vector<ReadRun> runs;
  for (size_t k : order) {
    const uint64_t end = offsets[k] + sizes[k];
    if (!runs.empty()) {
      ReadRun& run = runs.back();
      const uint64_t run_end = run.offset + run.size;
      // A padded epoch can list a record twice; it then joins the run that already covers it.
      if (run.shard == refs[k].shard && offsets[k] <= run_end + options.coalesce_gap_bytes &&
          std::max(end, run_end) - run.offset <= options.max_read_bytes) {
        run.size = std::max(end, run_end) - run.offset;
        run.items.push_back(k);
        continue;
      }
    }
    runs.push_back({refs[k].shard, offsets[k], sizes[k], {k}});
  }
  return runs;
}

BatchBuilder::BatchBuilder(const ShardSet& shards, const Sampler& sampler,
                           TransformOptions transform, ReadOptions read)
    : shards_(shards), sampler_(sampler), transform_(std::move(transform)), read_(read) {}

Status BatchBuilder::Build(int64_t epoch, std::span<const uint64_t> samples, std::span<float> data,
                           std::span<int64_t> labels) {
  const size_t n = samples.size();
  std::vector<RecordRef> refs(n);
  std::vector<uint64_t> offsets(n), sizes(n);
  for (size_t k = 0; k < n; ++k) {
    refs[k] = sampler_.Locate(samples[k]);
    const ShardReader& shard = *shards_.shards[refs[k].shard];
    offsets[k] = shard.record_offset(refs[k].record);
    sizes[k] = shard.record_size(refs[k].record);
  }
  const int64_t floats = transform_.output.floats();
  for (const ReadRun& run : PlanReads(refs, offsets, sizes, read_)) {
    const ShardReader& shard = *shards_.shards[run.shard];
    buffer_.resize(run.size);
    if (Status s = shard.file().ReadAt(run.offset, buffer_); !s.ok()) return s;
    for (size_t k : run.items) {
      const uint64_t record = refs[k].record;
      Result<Sample> sample =
          shard.Decode(record, {buffer_.data() + (offsets[k] - run.offset), sizes[k]});
      if (!sample.ok()) return sample.status();
      auto where = [&] {
        return shard.name() + ": at byte " + std::to_string(offsets[k]) + ": record " +
               std::to_string(record);
      };
      if (!shards_.classes.empty() && sample->label >= shards_.classes.size()) {
        return Status::InvalidArgument(
            where() + ": label " + std::to_string(sample->label) + " is not below the " +
            std::to_string(shards_.classes.size()) + " classes of labels.txt");
      }
      if (Status s = TransformSample(*sample, epoch, samples[k], data.data() + k * floats);
          !s.ok()) {
        return s.WithContext(where());
      }
      labels[k] = sample->label;
    }
  }
  return Status::Ok();
}

Status BatchBuilder::TransformSample(const Sample& sample, int64_t epoch, uint64_t sample_id,
                                     float* out) {
  const OutputSpec& spec = transform_.output;
  if (sample.format == SampleFormat::kRaw) {
    if (sample.channels > spec.channels) {
      return Status::InvalidArgument(std::to_string(sample.channels) +
                                     "-channel raw sample, but the loader outputs " +
                                     std::to_string(spec.channels) + " channel(s)");
    }
    const ImageView view{sample.data.data(), sample.width, sample.height, sample.channels,
                         int64_t{sample.width} * sample.channels};
    const Augmentation aug =
        ChooseAugmentation(view.width, view.height, spec.width, spec.height, transform_.augment,
                           transform_.seed, epoch, sample_id);
    ResizeNormalize(view, aug.crop, aug.flip, spec, out, resize_);
    return Status::Ok();
  }
  Result<JpegInfo> info = decoder_.ReadInfo(sample.data);
  if (!info.ok()) return info.status();
  const Augmentation aug =
      ChooseAugmentation(info->width, info->height, spec.width, spec.height, transform_.augment,
                         transform_.seed, epoch, sample_id);
  const ScaleFactor scale =
      ChooseScale(aug.crop, spec.width, spec.height, transform_.decode_scales);
  if (transform_.crop_decode) {
    Result<Rect> crop = decoder_.DecodeCrop(sample.data, spec.channels, scale, aug.crop, decoded_);
    if (!crop.ok()) return crop.status();
    ResizeNormalize(decoded_.view(), *crop, aug.flip, spec, out, resize_);
    return Status::Ok();
  }
  if (Status s = decoder_.Decode(sample.data, spec.channels, scale, decoded_); !s.ok()) return s;
  // The crop was chosen on the full image; map it onto the decoded one.
  const double fx = double(decoded_.width) / info->width;
  const double fy = double(decoded_.height) / info->height;
  const Rect crop{aug.crop.x * fx, aug.crop.y * fy, aug.crop.width * fx, aug.crop.height * fy};
  ResizeNormalize(decoded_.view(), crop, aug.flip, spec, out, resize_);
  return Status::Ok();
}

}  // namespace dljob::storage::loader
