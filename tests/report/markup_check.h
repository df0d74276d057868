// A tiny well-formedness check of the markup the report writes (SVG, and HTML with its void
// elements): tags balance, attribute values are quoted, and text holds no raw '<' or stray '&'.
// Not a parser of arbitrary HTML; enough to catch a missing close tag or an unescaped name.
#pragma once

#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tirtune::report::testing {

namespace detail {

/// Whether `text` at `pos` starts an entity: &name; or &#digits;.
inline bool IsEntity(std::string_view text, size_t pos) {
  size_t i = pos + 1;
  if (i < text.size() && text[i] == '#') ++i;
  size_t start = i;
  while (i < text.size() && std::isalnum(static_cast<unsigned char>(text[i]))) ++i;
  return i > start && i < text.size() && text[i] == ';';
}

}  // namespace detail

/// An empty string when `markup` is well-formed, else what is wrong and where.
inline std::string CheckMarkup(std::string_view markup) {
  static const std::set<std::string> kVoid = {"meta", "br", "hr", "img", "link", "input"};
  std::vector<std::string> open;
  size_t pos = 0;
  auto where = [&](size_t at) {
    return " at offset " + std::to_string(at) + ": '" + std::string(markup.substr(at, 60)) + "'";
  };
  while (pos < markup.size()) {
    char c = markup[pos];
    if (c == '&') {
      if (!detail::IsEntity(markup, pos)) return "stray '&'" + where(pos);
      ++pos;
      continue;
    }
    if (c != '<') {
      ++pos;
      continue;
    }
    if (markup.substr(pos, 4) == "<!--") {
      size_t end = markup.find("-->", pos);
      if (end == std::string_view::npos) return "unclosed comment" + where(pos);
      pos = end + 3;
      continue;
    }
    // Scan to the '>' that closes the tag, outside quoted attribute values.
    size_t i = pos + 1;
    char quote = 0;
    for (; i < markup.size(); ++i) {
      char t = markup[i];
      if (quote) {
        if (t == quote) quote = 0;
        if (t == '<') return "'<' inside an attribute value" + where(pos);
        if (t == '&' && !detail::IsEntity(markup, i)) return "stray '&' in an attribute" + where(i);
      } else if (t == '"' || t == '\'') {
        quote = t;
      } else if (t == '>') {
        break;
      } else if (t == '<') {
        return "'<' inside a tag" + where(pos);
      }
    }
    if (i == markup.size()) return "unclosed tag" + where(pos);
    std::string_view tag = markup.substr(pos + 1, i - pos - 1);
    size_t tag_pos = pos;
    pos = i + 1;
    if (!tag.empty() && tag[0] == '!') continue;  // <!DOCTYPE html>
    bool closing = !tag.empty() && tag[0] == '/';
    bool self_closing = !tag.empty() && tag.back() == '/';
    size_t name_start = closing ? 1 : 0, name_end = name_start;
    while (name_end < tag.size() && (std::isalnum(static_cast<unsigned char>(tag[name_end])) ||
                                     tag[name_end] == '-' || tag[name_end] == ':')) {
      ++name_end;
    }
    std::string name(tag.substr(name_start, name_end - name_start));
    if (name.empty()) return "a tag without a name" + where(tag_pos);
    if (closing) {
      if (open.empty() || open.back() != name) {
        return "</" + name + "> closes " + (open.empty() ? "nothing" : "<" + open.back() + ">") +
               where(tag_pos);
      }
      open.pop_back();
    } else if (!self_closing && !kVoid.count(name)) {
      open.push_back(name);
    }
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  return "";
}

/// How often `needle` occurs in `text`.
inline size_t CountOf(std::string_view text, std::string_view needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string_view::npos;
       pos = text.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

}  // namespace tirtune::report::testing
