#include "codegen/cpp/blockwise_emit.h"

#include "codegen/render.h"

#include "codegen/c_names.h"

namespace kiln {

namespace {
}  // namespace

void set_blockwise_batch_data(const NodeEmitContext& c, int nb, TemplateData& data) {
  const int n_in = c.node().num_inputs();
  TemplateData batch{TemplateData::type::list}, static_bcast{TemplateData::type::list};
  for (int d = 0; d < nb; ++d) {
    std::string lengths, bcast;
    for (int k = 0; k < n_in; ++k) {
      const bool b = c.in_var(k).type().broadcastable(d);
      lengths += (k ? ", " : "") + c.in(k) + ".shape[" + str(d) + "]";
      bcast += std::string(k ? ", " : "") + (b ? "true" : "false");
      if (!b) continue;
      TemplateData item;
      item.set("k", str(k));
      item.set("d", str(d));
      static_bcast.push_back(item);
    }
    TemplateData item;
    item.set("d", str(d));
    item.set("lengths", lengths);
    item.set("broadcastable", bcast);
    item.set("n_in", str(n_in));
    batch.push_back(item);
  }
  data.set("batch_dims", batch);
  data.set("static_broadcast", static_bcast);
}

BlockwiseCoreDims blockwise_core_dims(const NodeEmitContext& c, const GufuncSignature& sig, int nb) {
  BlockwiseCoreDims out;
  for (int i = 0; i < c.node().num_inputs(); ++i) {
    const auto& names = sig.inputs[static_cast<std::size_t>(i)];
    for (std::size_t j = 0; j < names.size(); ++j) {
      const int d = nb + static_cast<int>(j);
      const std::string len = c.in(i) + ".shape[" + str(d) + "]";
      if (auto literal = GufuncSignature::literal_length(names[j]))
        // An integer literal (format v2) fixes the length (the evaluator's message).
        out.checks.emplace_back(len + " != " + str(*literal),
                                "kg::fail(ctx, KILN_ERR_BROADCAST, \"core dimension '%s' has length %lld in input %d "
                                "but the signature fixes it (signature %s)\", " +
                                    c_string_literal(names[j]) + ", static_cast<long long>(" + len + "), " + str(i) +
                                    ", " + c_string_literal(sig.str()) + ")");
      auto [it, fresh] = out.first.emplace(names[j], std::make_pair(i, d));
      if (fresh) continue;
      const auto [owner, od] = it->second;
      const std::string owner_len = c.in(owner) + ".shape[" + str(od) + "]";
      out.checks.emplace_back(owner_len + " != " + len,
                              "kg::fail(ctx, KILN_ERR_BROADCAST, \"core dimension '%s' has length %lld in input %d "
                              "but %lld in input %d (signature %s)\", " +
                                  c_string_literal(names[j]) + ", static_cast<long long>(" + owner_len + "), " +
                                  str(owner) + ", static_cast<long long>(" + len + "), " + str(i) + ", " +
                                  c_string_literal(sig.str()) + ")");
    }
  }
  return out;
}

void set_checks(const std::vector<std::pair<std::string, std::string>>& checks, TemplateData& data) {
  TemplateData list{TemplateData::type::list};
  for (const auto& [cond, failure] : checks) {
    TemplateData item;
    item.set("mismatch", cond);
    item.set("failure", failure);
    list.push_back(item);
  }
  data.set("checks", list);
}

}  // namespace kiln
