#include "kube/label_selector.h"

#include <gtest/gtest.h>

namespace dljob::kube {
namespace {

using nlohmann::json;
using Op = LabelSelector::Op;

// One row: a selector, the labels of an object, and whether the selector selects it.
struct MatchCase {
  const char* selector;
  json labels;
  bool matches;
};

TEST(LabelSelector, MatchesAsKubernetesDoes) {
  const json web = {{"app", "web"}, {"tier", "front"}};
  const json worker = {{"dljob.io/role", "worker"}, {"env", ""}};
  const MatchCase cases[] = {
      // Equality, in each spelling; spaces around keys and values do not count.
      {"app=web", web, true},
      {"app==web", web, true},
      {"app = web , tier=front", web, true},
      {"app=db", web, false},
      {"app=web,tier=back", web, false},
      {"app!=db", web, true},
      {"app!=web", web, false},
      {"missing!=x", web, true},  // != holds for an object without the label
      {"missing=x", web, false},
      {"env=", worker, true},  // an empty value is a value
      {"env!=", worker, false},
      // Sets.
      {"dljob.io/role in (launcher, worker)", worker, true},
      {"dljob.io/role in (launcher)", worker, false},
      {"dljob.io/role notin (launcher)", worker, true},
      {"dljob.io/role notin (launcher,worker)", worker, false},
      {"absent notin (a)", worker, true},
      {"absent in (a)", worker, false},
      // Existence.
      {"env", worker, true},
      {"!env", worker, false},
      {"absent", worker, false},
      {"!absent", worker, true},
      {"! absent", worker, true},
      // All requirements must hold.
      {"!absent,dljob.io/role in (worker),env", worker, true},
      {"!absent,dljob.io/role in (worker),!env", worker, false},
      // Objects without labels; the empty selector.
      {"absent", json(nullptr), false},
      {"!absent", json(nullptr), true},
      {"a!=b", json::object(), true},
      {"", json(nullptr), true},
      {"  ", web, true},
  };
  for (const MatchCase& c : cases) {
    Result<LabelSelector> s = LabelSelector::Parse(c.selector);
    ASSERT_TRUE(s.ok()) << c.selector << ": " << s.status().message();
    EXPECT_EQ(s->Matches(c.labels), c.matches) << "\"" << c.selector << "\" on " << c.labels;
  }
}

TEST(LabelSelector, ParsesEachFormIntoARequirement) {
  struct ParseCase {
    const char* selector;
    LabelSelector::Requirement want;
  };
  const ParseCase cases[] = {
      {"a=b", {"a", Op::kEquals, {"b"}}},
      {"a == b", {"a", Op::kEquals, {"b"}}},
      {"a!=b", {"a", Op::kNotEquals, {"b"}}},
      {"x.io/a in (b, c)", {"x.io/a", Op::kIn, {"b", "c"}}},
      {"a notin (b,,c )", {"a", Op::kNotIn, {"b", "c"}}},
      {"a", {"a", Op::kExists, {}}},
      {"!a", {"a", Op::kNotExists, {}}},
  };
  for (const ParseCase& c : cases) {
    Result<LabelSelector> s = LabelSelector::Parse(c.selector);
    ASSERT_TRUE(s.ok()) << c.selector << ": " << s.status().message();
    ASSERT_EQ(s->requirements().size(), 1u) << c.selector;
    EXPECT_EQ(s->requirements()[0], c.want) << c.selector;
  }
  Result<LabelSelector> empty = LabelSelector::Parse("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(LabelSelector, RejectsMalformedNamingTheRequirement) {
  struct RejectCase {
    const char* selector;
    const char* message_has;
  };
  const RejectCase cases[] = {
      {"a in b", "invalid label key \"a in b\""},
      {"in (b)", "expected `key in (values)`"},
      {"a within (b)", "unknown operator \"within\""},
      {"a in ()", "empty value set"},
      {"a in (b", "missing ')'"},
      {"a=b,,c", "empty requirement"},
      {"a=b,", "empty requirement"},
      {"=b", "invalid label key \"\""},
      {"a b=c", "invalid label key \"a b\""},
      {"!", "invalid label key \"\""},
  };
  for (const RejectCase& c : cases) {
    Result<LabelSelector> s = LabelSelector::Parse(c.selector);
    ASSERT_FALSE(s.ok()) << c.selector;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find(c.message_has), std::string::npos)
        << c.selector << ": " << s.status().message();
  }
}

}  // namespace
}  // namespace dljob::kube
