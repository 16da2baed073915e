// The DLJob and DLQueue reference pages (docs/reference/dljob.md, dlqueue.md), generated as
// Markdown from the CRD schemas (crd.h), which are generated from the field tables
// (dljob_fields.h, dlqueue_fields.h): a table per object with each field's path, type, default,
// allowed values and description. A row added to a field table appears on the page by
// construction.
//
// Defaults are not in the tables; they come from running ApplyDefaults (defaults.h) on a job that
// sets only what it must, so the page says what the code does. A default that depends on other
// fields (gpusPerWorker from gpus) is shown as "derived"; its description says from what.
//
// `dljob-gen-crd --markdown` prints the pages, scripts/gen/reference.sh writes them, and
// jobs/reference_test.cc fails when a checked-in page differs from this output. Pure; thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace dljob {

// A reference page for `crd` (a CRD object as DLJobCrd() returns it). `defaults` maps a field path
// ("spec.runPolicy.backoffLimit"; "spec.data[].readOnly" for every element of a list) to the value
// defaulting gives the field when it is unset; null means the default depends on other fields.
// Without defaults the page has no Default column. `source` is the field table's path from the
// repository root, for the page's header.
std::string CrdReferenceMarkdown(const nlohmann::ordered_json& crd, const nlohmann::json& defaults,
                                 const std::string& source);

// The defaults of a DLJob's fields in the form above, from ApplyDefaults.
nlohmann::json DLJobDefaults();

// The two pages, as checked in under docs/reference/.
std::string DLJobReference();
std::string DLQueueReference();

}  // namespace dljob
