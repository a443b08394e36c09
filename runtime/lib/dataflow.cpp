//===- dataflow.cpp - Every byte a step reads is the value it expects -----===//
//
// checkSchedule proves that the dependencies order every two accesses to the
// same bytes where one writes. Then the schedule's order (a topological
// order of the dependencies) is the order of every byte's accesses in any
// run, and the data flow can be checked by walking the steps once in that
// order, tracking per buffer the boxes of its elements that hold its value:
// written by an earlier step (or filled as an input or constant block) and
// not overwritten since through another buffer sharing those bytes. A
// reshape's view (Buffer::viewOf) and the buffer it views are one value:
// their state is kept in the viewed buffer's coordinates.
//
//===----------------------------------------------------------------------===//

#include "ein/bundle.h"

#include <algorithm>
#include <map>

namespace ein {
namespace {

struct Box {
  std::vector<int64_t> offset, extent;
};

bool intersects(const Box &a, const Box &b) {
  for (size_t d = 0; d < a.offset.size(); ++d)
    if (a.offset[d] >= b.offset[d] + b.extent[d] ||
        b.offset[d] >= a.offset[d] + a.extent[d])
      return false;
  return true;
}

bool contains(const Box &outer, const Box &inner) {
  for (size_t d = 0; d < outer.offset.size(); ++d)
    if (inner.offset[d] < outer.offset[d] ||
        inner.offset[d] + inner.extent[d] > outer.offset[d] + outer.extent[d])
      return false;
  return true;
}

/// a minus b, as disjoint boxes: per dimension, the slabs of `a` below and
/// above `b`, then `a` narrowed to `b` in that dimension.
void subtract(Box a, const Box &b, std::vector<Box> &out) {
  if (!intersects(a, b)) {
    out.push_back(std::move(a));
    return;
  }
  for (size_t d = 0; d < a.offset.size(); ++d) {
    int64_t lo = std::max(a.offset[d], b.offset[d]),
            hi = std::min(a.offset[d] + a.extent[d], b.offset[d] + b.extent[d]);
    if (a.offset[d] < lo) {
      Box below = a;
      below.extent[d] = lo - a.offset[d];
      out.push_back(std::move(below));
    }
    if (hi < a.offset[d] + a.extent[d]) {
      Box above = a;
      above.offset[d] = hi;
      above.extent[d] = a.offset[d] + a.extent[d] - hi;
      out.push_back(std::move(above));
    }
    a.offset[d] = lo;
    a.extent[d] = hi - lo;
  }
}

/// The part of `region` no box of `boxes` covers (empty: all covered).
std::vector<Box> uncovered(const Box &region, const std::vector<Box> &boxes) {
  std::vector<Box> left = {region}, next;
  for (const Box &b : boxes) {
    next.clear();
    for (Box &piece : left)
      subtract(std::move(piece), b, next);
    left.swap(next);
    if (left.empty())
      break;
  }
  return left;
}

/// The elements [first, last) of a row-major `shape`, as boxes.
void linearBoxes(const std::vector<int64_t> &shape, size_t dim, int64_t first,
                 int64_t last, Box prefix, std::vector<Box> &out) {
  if (first >= last)
    return;
  if (dim == shape.size()) {
    out.push_back(std::move(prefix));
    return;
  }
  int64_t stride = 1;
  for (size_t d = dim + 1; d < shape.size(); ++d)
    stride *= shape[d];
  auto rows = [&](int64_t from, int64_t to) { // whole rows [from, to)
    if (from >= to)
      return;
    Box b = prefix;
    b.offset.push_back(from);
    b.extent.push_back(to - from);
    for (size_t d = dim + 1; d < shape.size(); ++d) {
      b.offset.push_back(0);
      b.extent.push_back(shape[d]);
    }
    out.push_back(std::move(b));
  };
  auto part = [&](int64_t row, int64_t from, int64_t to) { // within one row
    Box b = prefix;
    b.offset.push_back(row);
    b.extent.push_back(1);
    linearBoxes(shape, dim + 1, from, to, std::move(b), out);
  };
  int64_t r0 = first / stride, r1 = last / stride;
  if (r0 == r1) {
    part(r0, first - r0 * stride, last - r0 * stride);
    return;
  }
  int64_t full = r0;
  if (first % stride) {
    part(r0, first - r0 * stride, stride);
    full = r0 + 1;
  }
  rows(full, r1);
  if (last % stride)
    part(r1, 0, last - r1 * stride);
}

Box wholeOf(const Buffer &b) {
  return {std::vector<int64_t>(b.type.shape.size(), 0), b.type.shape};
}

std::string boxText(const Box &box) {
  std::string s = "[";
  for (size_t d = 0; d < box.offset.size(); ++d)
    s += (d ? ", " : "") + std::to_string(box.offset[d]) + ":" +
         std::to_string(box.offset[d] + box.extent[d]);
  return s + "]";
}

/// The state of one buffer: the boxes of its elements that hold its value,
/// and the last write through another buffer that took some away.
struct Value {
  std::vector<Box> valid;
  int clobberStep = -1, clobberBuffer = -1;
  /// What transfers wrote that no step has read yet.
  struct Unread {
    Box box;
    size_t step;
  };
  std::vector<Unread> unread;

  void add(const Box &box) {
    for (const Box &v : valid)
      if (contains(v, box))
        return;
    valid.erase(std::remove_if(valid.begin(), valid.end(),
                               [&](const Box &v) { return contains(box, v); }),
                valid.end());
    valid.push_back(box);
  }

  void remove(const std::vector<Box> &boxes) {
    for (const Box &b : boxes) {
      std::vector<Box> next;
      for (Box &v : valid)
        subtract(std::move(v), b, next);
      valid.swap(next);
    }
  }
};

/// The buffers of one device by offset, to find those a byte range touches.
struct DeviceBuffers {
  std::vector<int> ids;        // by offset
  std::vector<int64_t> maxEnd; // the largest end among ids[0..k]
};

/// `box` of buffer `b`, a view of `root`, in `root`'s coordinates: its
/// row-major runs of elements, each as boxes of `root`.
std::vector<Box> inRoot(const Buffer &b, const Buffer &root, const Box &box) {
  const std::vector<int64_t> &shape = b.type.shape;
  std::vector<Box> out;
  if (&b == &root || (box.extent == shape && b.offset == root.offset &&
                      b.bytes() == root.bytes())) {
    out.push_back(&b == &root ? box : wholeOf(root));
    return out;
  }
  // A view starts this many of its root's elements in.
  int64_t base = (b.offset - root.offset) / dtypeBytes(b.type.dtype);
  // Dimensions after `inner` are whole: each index of the dimensions before
  // it starts one run of extent[inner] * (their size) elements.
  size_t rank = shape.size(), inner = rank - 1;
  int64_t tail = 1;
  while (inner > 0 && box.offset[inner] == 0 &&
         box.extent[inner] == shape[inner]) {
    tail *= shape[inner];
    --inner;
  }
  int64_t run = box.extent[inner] * tail;
  std::vector<int64_t> index(box.offset.begin(), box.offset.begin() + inner);
  while (true) {
    int64_t first = 0;
    for (size_t d = 0; d < rank; ++d)
      first = first * shape[d] + (d < inner    ? index[d]
                                  : d == inner ? box.offset[d]
                                               : 0);
    linearBoxes(root.type.shape, 0, base + first, base + first + run, Box(),
                out);
    size_t d = inner;
    while (d > 0) {
      --d;
      if (++index[d] < box.offset[d] + box.extent[d])
        break;
      index[d] = box.offset[d];
      if (d == 0)
        return out;
    }
    if (inner == 0)
      return out;
  }
}

} // namespace

bool checkDataFlow(const Manifest &m, std::string &error) {
  // inRoot maps a view's elements into its buffer's by its shape: a view
  // whose shape is not what its bytes hold (a scalar of a larger buffer,
  // rows wider than the buffer's) must not reach it. The reader refuses
  // these; a manifest made in code comes here unread.
  for (size_t id = 0; id < m.buffers.size(); ++id) {
    const Buffer &b = m.buffers[id];
    std::string field, why;
    if (b.viewOf >= 0 && !checkView(b, m.buffers[b.viewOf], field, why)) {
      error =
          "manifest.buffers[" + std::to_string(id) + "]." + field + ": " + why;
      return false;
    }
  }
  auto rootOf = [&](int id) {
    return m.buffers[id].viewOf >= 0 ? m.buffers[id].viewOf : id;
  };
  // Per buffer that is not a view: the state of its value (and its views').
  std::vector<Value> values(m.buffers.size());
  for (const auto *layouts : {&m.inputs, &m.constants})
    for (const TensorLayout &layout : *layouts)
      for (const BlockPlacement &p : layout.blocks) {
        // The block's elements (a view's, within its buffer's) hold values.
        int root = rootOf(p.buffer);
        const Buffer &b = m.buffers[p.buffer];
        for (const Box &box : inRoot(b, m.buffers[root], wholeOf(b)))
          values[root].add(box);
      }

  std::vector<DeviceBuffers> devices(m.devices);
  for (size_t id = 0; id < m.buffers.size(); ++id)
    if (m.buffers[id].viewOf < 0)
      devices[m.buffers[id].device].ids.push_back(int(id));
  for (DeviceBuffers &d : devices) {
    std::sort(d.ids.begin(), d.ids.end(), [&](int x, int y) {
      return m.buffers[x].offset < m.buffers[y].offset;
    });
    int64_t end = 0;
    for (int id : d.ids) {
      end = std::max(end, m.buffers[id].offset + m.buffers[id].bytes());
      d.maxEnd.push_back(end);
    }
  }

  auto element = [&](const Buffer &b, const std::vector<int64_t> &index) {
    int64_t linear = 0;
    for (size_t d = 0; d < index.size(); ++d)
      linear = linear * b.type.shape[d] + index[d];
    return linear;
  };
  auto named = [&](int id) {
    const Buffer &b = m.buffers[id];
    return "buffer '" + b.name + "'" +
           (b.viewOf >= 0 ? " (a view of '" + m.buffers[b.viewOf].name +
                                "', in whose elements this is)"
                          : "");
  };

  for (size_t i = 0; i < m.steps.size(); ++i) {
    std::vector<BufferAccess> accesses = stepAccesses(m, m.steps[i]);
    for (const BufferAccess &a : accesses) {
      if (a.access == Access::Write)
        continue;
      int root = rootOf(a.buffer);
      Value &v = values[root];
      for (const Box &box :
           inRoot(m.buffers[a.buffer], m.buffers[root], {a.offset, a.extent})) {
        v.unread.erase(std::remove_if(v.unread.begin(), v.unread.end(),
                                      [&](const Value::Unread &u) {
                                        return intersects(u.box, box);
                                      }),
                       v.unread.end());
        std::vector<Box> left = uncovered(box, v.valid);
        if (left.empty())
          continue;
        error = "manifest.steps[" + std::to_string(i) + "]: reads elements " +
                boxText(left.front()) + " of " + named(a.buffer) + ", which ";
        if (v.clobberStep >= 0)
          error += "step " + std::to_string(v.clobberStep) +
                   " overwrote through buffer '" +
                   m.buffers[v.clobberBuffer].name +
                   "' (it shares their bytes) after they were written";
        else
          error += "no earlier step writes (and no input or constant block "
                   "fills)";
        return false;
      }
    }
    for (const BufferAccess &a : accesses) {
      if (a.access == Access::Read)
        continue;
      const Buffer &b = m.buffers[a.buffer];
      int root = rootOf(a.buffer);
      bool moves = m.steps[i].kind == StepKind::Transfer;
      for (const Box &box : inRoot(b, m.buffers[root], {a.offset, a.extent})) {
        // Rewritten through the same buffer, moved data is superseded (a
        // region a later insert replaces, say): no error.
        std::vector<Value::Unread> &unread = values[root].unread;
        unread.erase(std::remove_if(unread.begin(), unread.end(),
                                    [&](const Value::Unread &u) {
                                      return u.step != i &&
                                             intersects(u.box, box);
                                    }),
                     unread.end());
        values[root].add(box);
        if (moves)
          values[root].unread.push_back({box, i});
      }
      // The bytes the write spans: from its first element to its last.
      int64_t width = dtypeBytes(b.type.dtype);
      std::vector<int64_t> lastIndex = a.offset;
      for (size_t d = 0; d < lastIndex.size(); ++d)
        lastIndex[d] += a.extent[d] - 1;
      int64_t first = b.offset + element(b, a.offset) * width,
              last = b.offset + (element(b, lastIndex) + 1) * width;
      const DeviceBuffers &d = devices[b.device];
      auto upper = std::upper_bound(
          d.ids.begin(), d.ids.end(), last - 1,
          [&](int64_t at, int id) { return at < m.buffers[id].offset; });
      for (size_t k = size_t(upper - d.ids.begin()); k-- > 0;) {
        if (d.maxEnd[k] <= first)
          break;
        int other = d.ids[k];
        const Buffer &o = m.buffers[other];
        if (other == root || o.offset + o.bytes() <= first ||
            values[other].valid.empty())
          continue;
        // The elements of `o` whose bytes the write spans.
        int64_t w = dtypeBytes(o.type.dtype);
        int64_t from = (std::max(first, o.offset) - o.offset) / w,
                to = (std::min(last, o.offset + o.bytes()) - o.offset + w - 1) /
                     w;
        std::vector<Box> lost;
        linearBoxes(o.type.shape, 0, from, to, Box(), lost);
        values[other].remove(lost);
        std::vector<Value::Unread> &unread = values[other].unread;
        unread.erase(std::remove_if(unread.begin(), unread.end(),
                                    [&](const Value::Unread &u) {
                                      return std::any_of(
                                          lost.begin(), lost.end(),
                                          [&](const Box &l) {
                                            return intersects(u.box, l);
                                          });
                                    }),
                     unread.end());
        values[other].clobberStep = int(i);
        values[other].clobberBuffer = a.buffer;
      }
    }
  }

  std::vector<bool> isOutput(m.buffers.size(), false);
  for (const TensorLayout &layout : m.outputs)
    for (const BlockPlacement &p : layout.blocks)
      isOutput[rootOf(p.buffer)] = true;
  // A transfer whose data no step reads, and no write replaces, before the
  // run ends (and is no output's) moved it for nothing: the step that reads
  // it is missing. (Data a later write replaces is not reported: the
  // compiler moves whole blocks where an insert then replaces a part.)
  for (size_t root = 0; root < values.size(); ++root)
    if (!isOutput[root] && !values[root].unread.empty()) {
      const Value::Unread &u = values[root].unread.front();
      error = "manifest.steps[" + std::to_string(u.step) +
              "]: writes elements " + boxText(u.box) + " of buffer '" +
              m.buffers[root].name +
              "', which no later step reads before the run ends (a step "
              "that reads them is missing)";
      return false;
    }

  for (size_t t = 0; t < m.outputs.size(); ++t)
    for (const BlockPlacement &p : m.outputs[t].blocks) {
      int root = rootOf(p.buffer);
      const Value &v = values[root];
      std::vector<Box> left = uncovered(wholeOf(m.buffers[root]), v.valid);
      if (left.empty())
        continue;
      error = "manifest.outputs[" + std::to_string(t) + "]: elements " +
              boxText(left.front()) + " of its block " + named(p.buffer) +
              " are ";
      if (v.clobberStep >= 0)
        error += "overwritten by step " + std::to_string(v.clobberStep) +
                 " through buffer '" + m.buffers[v.clobberBuffer].name +
                 "' after they were written";
      else
        error += "never written";
      return false;
    }
  return true;
}

} // namespace ein
