#pragma once
// A radix-tree prefix cache over a PagedPool's pages (RadixAttention's idea): token sequences
// whose K/V already sit in pool pages are kept in a tree keyed by their tokens, so a new request
// finds its longest cached prefix and shares those pages instead of writing them again.
//
// Granularity is the page: an edge holds whole pages (a multiple of page_size tokens), a match
// is the longest prefix of whole pages found in the tree, and an edge is split at the last page
// both token sequences share. Tokens of a trailing partial page are not cached (they are still
// being written by their sequence; sharing them would need a copy on the next append anyway).
//
// Holders. The tree holds one pool reference on every page it caches (PagedPool::retain_pages);
// a sequence admitted with a matched prefix holds its own (PagedPool::admit_with_prefix). So a
// page's refcount = (1 if the tree caches it) + (live sequences whose block table lists it), and
// evicting a node only frees pages no sequence still reads.
//
// Leases. acquire() matches and locks the matched path (a lock count per node: the number of
// leases whose path runs through it); a locked node is never evicted. Splits keep the node a
// lease points to (the new node goes above it), so a lease stays valid until released.
//
// Eviction: least recently used unlocked leaves first, one whole leaf at a time; a parent whose
// last child went becomes a candidate itself. "Recently" is a logical clock bumped once per
// insert or acquire, which touches every node on its path, so runs are deterministic.
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "pools/paged_pool.hpp"

namespace decode_bench {

class RadixCache {
  struct Node;

 public:
  // The matched, locked prefix: `tokens` (a multiple of page_size) and its pages in token order.
  class Lease {
   public:
    Lease() = default;
    std::int64_t tokens() const { return tokens_; }
    const std::vector<std::int32_t>& pages() const { return pages_; }
    bool active() const { return node_ != nullptr; }

   private:
    friend class RadixCache;
    Node* node_ = nullptr;
    std::int64_t tokens_ = 0;
    std::vector<std::int32_t> pages_;
  };

  struct Stats {
    std::int64_t nodes = 0;            // excluding the root
    std::int64_t cached_pages = 0;     // pages the tree holds a reference on
    std::int64_t locked_pages = 0;     // of those, on a path some lease holds
    std::int64_t evictable_pages = 0;  // cached_pages - locked_pages
    std::int64_t leases = 0;
    std::int64_t splits = 0;           // edges split so far
    std::int64_t evicted_pages = 0;    // tree references dropped by eviction so far
  };

  explicit RadixCache(PagedPool& pool);
  ~RadixCache();  // drops the tree's page references (leases must be released first)
  RadixCache(const RadixCache&) = delete;
  RadixCache& operator=(const RadixCache&) = delete;

  int page_size() const { return page_size_; }

  // Length in tokens of the longest cached whole-page prefix of `tokens`; changes nothing.
  std::int64_t match_length(std::span<const std::int32_t> tokens) const;
  // Matches and locks the longest cached prefix (splitting the edge where it ends inside one).
  Lease acquire(std::span<const std::int32_t> tokens);
  void release(Lease& lease);  // unlocks; the lease becomes inactive (a no-op if it is)

  // Caches the whole pages of `tokens` whose K/V are `pages` (pages[i] holds tokens
  // [i * page_size, (i + 1) * page_size); pages.size() must be at least tokens / page_size, extra
  // entries, e.g. a partial tail page, are ignored). Pages of a prefix already cached are not
  // taken (the tree keeps its own copy); the rest get one tree reference each. Returns the
  // number of pages newly cached.
  std::int64_t insert(std::span<const std::int32_t> tokens, std::span<const std::int32_t> pages);

  // Evicts LRU unlocked leaves until at least `pages` pool pages went back to the free list or
  // nothing is evictable. Returns the pages freed in the pool (a tree page still read by a
  // sequence is dropped from the tree but not freed).
  std::int64_t evict(std::int64_t pages);
  // Evicts until the pool has at least `free_pages` free; true when it does.
  bool make_room(std::int64_t free_pages);

  Stats stats() const;
  // Every cached root-to-node path as (tokens, pages), in a fixed order (tests, debugging).
  struct Path {
    std::vector<std::int32_t> tokens, pages;
    std::int32_t locks = 0;
    std::uint64_t last_use = 0;
  };
  std::vector<Path> paths() const;

 private:
  struct Node {
    std::vector<std::int32_t> tokens;  // edge label, a multiple of page_size
    std::vector<std::int32_t> pages;   // tokens.size() / page_size
    Node* parent = nullptr;
    std::map<std::vector<std::int32_t>, std::unique_ptr<Node>> children;  // keyed by first page
    std::int32_t locks = 0;
    std::uint64_t last_use = 0;
  };

  std::vector<std::int32_t> page_key(std::span<const std::int32_t> tokens, std::size_t at) const;
  // Whole pages `edge` and tokens[at..] share from the edge's start.
  std::size_t shared_pages(const Node& edge, std::span<const std::int32_t> tokens, std::size_t at) const;
  // Splits `node`'s edge after `pages` pages; returns the new upper node (node stays the lower one).
  Node* split(Node* node, std::size_t pages);
  void touch_path(Node* node);
  void drop_subtree_refs(Node& node);

  PagedPool& pool_;
  int page_size_;
  std::unique_ptr<Node> root_;
  std::uint64_t clock_ = 0;
  std::int64_t leases_ = 0, splits_ = 0, evicted_pages_ = 0;
};

}  // namespace decode_bench
