#include "pools/radix_cache.hpp"

#include <algorithm>
#include <queue>
#include <tuple>

namespace decode_bench {

RadixCache::RadixCache(PagedPool& pool)
    : pool_(pool), page_size_(pool.config().page_size), root_(std::make_unique<Node>()) {}

RadixCache::~RadixCache() {
  // The pool outlives the cache (it is passed by reference); its pages go back to it here.
  try {
    drop_subtree_refs(*root_);
  } catch (...) {
    // A pool that refuses these pages was changed behind the tree's back; nothing safe is left to do.
  }
}

void RadixCache::drop_subtree_refs(Node& node) {
  for (auto& [key, child] : node.children) drop_subtree_refs(*child);
  if (!node.pages.empty()) pool_.release_pages(node.pages);
}

std::vector<std::int32_t> RadixCache::page_key(std::span<const std::int32_t> tokens, std::size_t at) const {
  return {tokens.begin() + static_cast<std::ptrdiff_t>(at), tokens.begin() + static_cast<std::ptrdiff_t>(at + page_size_)};
}

std::size_t RadixCache::shared_pages(const Node& edge, std::span<const std::int32_t> tokens, std::size_t at) const {
  const std::size_t ps = static_cast<std::size_t>(page_size_);
  std::size_t k = 0;
  while (k < edge.pages.size() && at + (k + 1) * ps <= tokens.size() &&
         std::equal(edge.tokens.begin() + static_cast<std::ptrdiff_t>(k * ps),
                    edge.tokens.begin() + static_cast<std::ptrdiff_t>((k + 1) * ps),
                    tokens.begin() + static_cast<std::ptrdiff_t>(at + k * ps)))
    ++k;
  return k;
}

RadixCache::Node* RadixCache::split(Node* node, std::size_t pages) {
  const std::size_t cut = pages * static_cast<std::size_t>(page_size_);
  Node* parent = node->parent;
  auto key = page_key(node->tokens, 0);
  std::unique_ptr<Node> lower = std::move(parent->children.at(key));
  auto upper = std::make_unique<Node>();
  upper->tokens.assign(lower->tokens.begin(), lower->tokens.begin() + static_cast<std::ptrdiff_t>(cut));
  upper->pages.assign(lower->pages.begin(), lower->pages.begin() + static_cast<std::ptrdiff_t>(pages));
  upper->parent = parent;
  upper->locks = lower->locks;  // every lease through the lower part also runs through the upper
  upper->last_use = lower->last_use;
  lower->tokens.erase(lower->tokens.begin(), lower->tokens.begin() + static_cast<std::ptrdiff_t>(cut));
  lower->pages.erase(lower->pages.begin(), lower->pages.begin() + static_cast<std::ptrdiff_t>(pages));
  lower->parent = upper.get();
  Node* up = upper.get();
  up->children.emplace(page_key(lower->tokens, 0), std::move(lower));
  parent->children[key] = std::move(upper);
  ++splits_;
  return up;
}

void RadixCache::touch_path(Node* node) {
  ++clock_;
  for (Node* n = node; n != nullptr; n = n->parent) n->last_use = clock_;
}

std::int64_t RadixCache::match_length(std::span<const std::int32_t> tokens) const {
  const std::size_t ps = static_cast<std::size_t>(page_size_);
  const Node* node = root_.get();
  std::size_t at = 0;
  while (at + ps <= tokens.size()) {
    auto it = node->children.find(page_key(tokens, at));
    if (it == node->children.end()) break;
    const std::size_t k = shared_pages(*it->second, tokens, at);
    at += k * ps;
    if (k < it->second->pages.size()) break;
    node = it->second.get();
  }
  return static_cast<std::int64_t>(at);
}

RadixCache::Lease RadixCache::acquire(std::span<const std::int32_t> tokens) {
  const std::size_t ps = static_cast<std::size_t>(page_size_);
  Node* node = root_.get();
  std::size_t at = 0;
  Lease lease;
  while (at + ps <= tokens.size()) {
    auto it = node->children.find(page_key(tokens, at));
    if (it == node->children.end()) break;
    Node* child = it->second.get();
    const std::size_t k = shared_pages(*child, tokens, at);
    const bool inside_edge = k < child->pages.size();
    if (inside_edge) child = split(child, k);  // k >= 1: the first page matched the key
    lease.pages_.insert(lease.pages_.end(), child->pages.begin(), child->pages.end());
    at += k * ps;
    node = child;
    if (inside_edge) break;
  }
  for (Node* n = node; n != root_.get(); n = n->parent) ++n->locks;
  touch_path(node);
  lease.node_ = node;
  lease.tokens_ = static_cast<std::int64_t>(at);
  ++leases_;
  return lease;
}

void RadixCache::release(Lease& lease) {
  if (!lease.node_) return;
  for (Node* n = lease.node_; n != root_.get(); n = n->parent) --n->locks;
  lease = Lease{};
  --leases_;
}

std::int64_t RadixCache::insert(std::span<const std::int32_t> tokens, std::span<const std::int32_t> pages) {
  const std::size_t ps = static_cast<std::size_t>(page_size_);
  const std::size_t whole = tokens.size() / ps;
  if (pages.size() < whole)
    throw PoolError(PoolErrorKind::InvalidArgument, "RadixCache::insert: " + std::to_string(tokens.size()) +
                                                        " tokens fill " + std::to_string(whole) + " pages but " +
                                                        std::to_string(pages.size()) + " page indices were given");
  Node* node = root_.get();
  std::size_t at = 0;
  std::int64_t added = 0;
  while (at + ps <= tokens.size()) {
    auto it = node->children.find(page_key(tokens, at));
    if (it == node->children.end()) {
      const std::size_t first = at / ps;
      const std::span<const std::int32_t> fresh = pages.subspan(first, whole - first);
      for (std::int32_t p : fresh)
        if (p >= 0 && p < pool_.pages().total() && pool_.pages().refcount(p) > 0 && pool_.pages().fill(p) != page_size_)
          throw PoolError(PoolErrorKind::InvalidArgument, "RadixCache::insert: page " + std::to_string(p) + " holds " +
                                                              std::to_string(pool_.pages().fill(p)) + " of " +
                                                              std::to_string(page_size_) + " tokens, not a whole page");
      pool_.retain_pages(fresh);  // checks every page is in use before taking any
      auto leaf = std::make_unique<Node>();
      leaf->tokens.assign(tokens.begin() + static_cast<std::ptrdiff_t>(at),
                          tokens.begin() + static_cast<std::ptrdiff_t>(whole * ps));
      leaf->pages.assign(fresh.begin(), fresh.end());
      leaf->parent = node;
      Node* made = leaf.get();
      node->children.emplace(page_key(tokens, at), std::move(leaf));
      added = static_cast<std::int64_t>(fresh.size());
      node = made;
      break;
    }
    Node* child = it->second.get();
    const std::size_t k = shared_pages(*child, tokens, at);
    if (k < child->pages.size()) child = split(child, k);
    at += k * ps;
    node = child;
  }
  touch_path(node);
  return added;
}

std::int64_t RadixCache::evict(std::int64_t pages) {
  const std::int64_t free_before = pool_.pages().free_count();
  // Oldest first; ties (none arise from the clock, but a fixed order costs nothing) by edge tokens.
  auto later = [](const Node* a, const Node* b) {
    return std::tie(a->last_use, a->tokens) > std::tie(b->last_use, b->tokens);
  };
  std::priority_queue<Node*, std::vector<Node*>, decltype(later)> leaves(later);
  std::vector<Node*> stack{root_.get()};
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (auto& [key, child] : n->children) stack.push_back(child.get());
    if (n != root_.get() && n->children.empty() && n->locks == 0) leaves.push(n);
  }
  while (pool_.pages().free_count() - free_before < pages && !leaves.empty()) {
    Node* leaf = leaves.top();
    leaves.pop();
    pool_.release_pages(leaf->pages);
    evicted_pages_ += static_cast<std::int64_t>(leaf->pages.size());
    Node* parent = leaf->parent;
    parent->children.erase(page_key(leaf->tokens, 0));
    if (parent != root_.get() && parent->children.empty() && parent->locks == 0) leaves.push(parent);
  }
  return pool_.pages().free_count() - free_before;
}

bool RadixCache::make_room(std::int64_t free_pages) {
  const std::int64_t have = pool_.pages().free_count();
  if (have < free_pages) evict(free_pages - have);
  return pool_.pages().free_count() >= free_pages;
}

RadixCache::Stats RadixCache::stats() const {
  Stats s;
  std::vector<const Node*> stack{root_.get()};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for (const auto& [key, child] : n->children) stack.push_back(child.get());
    if (n == root_.get()) continue;
    ++s.nodes;
    const auto p = static_cast<std::int64_t>(n->pages.size());
    s.cached_pages += p;
    if (n->locks > 0) s.locked_pages += p;
  }
  s.evictable_pages = s.cached_pages - s.locked_pages;
  s.leases = leases_;
  s.splits = splits_;
  s.evicted_pages = evicted_pages_;
  return s;
}

std::vector<RadixCache::Path> RadixCache::paths() const {
  std::vector<Path> out;
  struct Frame {
    const Node* node;
    Path path;
  };
  std::vector<Frame> stack{{root_.get(), {}}};
  while (!stack.empty()) {
    Frame f = std::move(stack.back());
    stack.pop_back();
    if (f.node != root_.get()) out.push_back(f.path);
    for (auto it = f.node->children.rbegin(); it != f.node->children.rend(); ++it) {
      Frame next{it->second.get(), f.path};
      next.path.tokens.insert(next.path.tokens.end(), it->second->tokens.begin(), it->second->tokens.end());
      next.path.pages.insert(next.path.pages.end(), it->second->pages.begin(), it->second->pages.end());
      next.path.locks = it->second->locks;
      next.path.last_use = it->second->last_use;
      stack.push_back(std::move(next));
    }
  }
  return out;
}

}  // namespace decode_bench
