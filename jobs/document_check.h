// The whole check of one DLJob or DLQueue document — decoded, defaulted, validated — as
// `dljob validate` reports it and the operator's admission webhook refuses it: one definition,
// so that `kubectl apply` of a bad file is refused with exactly the messages `dljob validate`
// prints for it.
//
// A problem the decoder found (a field of the wrong type, an unknown field) is reported once:
// validation's complaint about the same path ("required") is dropped. Pure; thread-safe.
#pragma once

#include "jobs/codec.h"
#include "jobs/dlqueue_codec.h"
#include "jobs/field_error.h"

namespace dljob {

// True when some error is about the whole document (a syntax error, not a mapping): there is
// nothing to validate.
bool IsWholeDocumentProblem(const FieldErrors& errors);

// The decoder's errors, then validation's for the fields that decoded, located at `positions`
// (codec.h's LocateErrors: file order, line and column) when there are any.
FieldErrors MergeProblems(const FieldErrors& decode_errors, FieldErrors validation,
                          const SourcePositions& positions);

// Defaults `decoded.job` in place (defaults.h) and returns every problem of the document:
// decoding's, then Validate's. A whole-document problem is returned alone, undefaulted.
FieldErrors CheckDecodedJob(DecodeResult& decoded);
// A DLQueue has no defaults: decoding's problems, then Validate's.
FieldErrors CheckDecodedQueue(const QueueDecodeResult& decoded);

}  // namespace dljob
