//===- npy.cpp - NumPy .npy files -----------------------------------------===//

#include "ein/npy.h"

#include "ein/partition.h"
#include "ein/staged_file.h"
#include "json_node.h"
#include "parallel.h"

#include <sstream>

namespace ein {

int64_t HostTensor::numElements() const { return product(shape); }

const char *npyDescriptor(DType type) {
  switch (type) {
  case DType::F64:
    return "<f8";
  case DType::F32:
    return "<f4";
  case DType::F16:
    return "<f2";
  case DType::BF16:
    return "<u2";
  case DType::I64:
  case DType::Index:
    return "<i8";
  case DType::I32:
    return "<i4";
  case DType::I1:
    return "|b1";
  }
  return "?";
}

namespace {

/// The value of `key` in the header dictionary, up to the next top-level
/// comma (tuples kept whole).
bool headerField(const std::string &header, const std::string &key,
                 std::string &value) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return false;
  size_t colon = header.find(':', at);
  if (colon == std::string::npos)
    return false;
  size_t start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos)
    return false;
  size_t end = header[start] == '(' ? header.find(')', start) + 1
                                    : header.find_first_of(",}", start);
  if (end == std::string::npos || end == 0)
    return false;
  value = header.substr(start, end - start);
  return true;
}

bool parseShape(const std::string &text, std::vector<int64_t> &shape) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    return false;
  std::stringstream in(text.substr(1, text.size() - 2));
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t first = item.find_first_not_of(' ');
    if (first == std::string::npos)
      continue; // the trailing comma of a 1-tuple
    size_t last = item.find_last_not_of(' ');
    std::string digits = item.substr(first, last - first + 1);
    if (digits.empty() ||
        digits.find_first_not_of("0123456789") != std::string::npos ||
        digits.size() > 15)
      return false;
    shape.push_back(std::stoll(digits));
  }
  return true;
}

} // namespace

std::vector<unsigned char> tensorBytes(const HostTensor &t) {
  size_t width = dtypeBytes(t.dtype);
  std::vector<unsigned char> bytes(t.data.size() * width);
  parallelFor(int64_t(t.data.size()), [&](int64_t first, int64_t end) {
    for (int64_t i = first; i < end; ++i)
      encodeElement(t.dtype, t.data[i], bytes.data() + i * width);
  });
  return bytes;
}

std::vector<double> tensorValues(DType type, const unsigned char *bytes,
                                 size_t count) {
  size_t width = dtypeBytes(type);
  std::vector<double> values(count);
  parallelFor(int64_t(count), [&](int64_t first, int64_t end) {
    for (int64_t i = first; i < end; ++i)
      values[i] = decodeElement(type, bytes + i * width);
  });
  return values;
}

namespace {

/// parseNpy on `bytes`, the first bytes of a file of `fileSize` bytes: with
/// only a prefix, checks the header and that the size fits it, and decodes
/// nothing.
bool parseNpyPrefix(const std::string &bytes, uint64_t fileSize,
                    const std::string &path, DType declared, HostTensor &out,
                    std::string &error);

} // namespace

bool readNpy(const std::string &path, DType declared, HostTensor &out,
             std::string &error) {
  // The header first: a file whose size its header and the declared type
  // do not account for is refused before its body is read.
  constexpr uint64_t kHeaderBytes = 1 << 16;
  std::string bytes;
  uint64_t size = 0;
  if (!format::readRegularFile(path, bytes, error, UINT64_MAX, kHeaderBytes,
                               &size) ||
      !parseNpyPrefix(bytes, size, path, declared, out, error))
    return false;
  if (bytes.size() == size)
    return true;
  if (!format::readRegularFile(path, bytes, error))
    return false;
  return parseNpy(bytes, path, declared, out, error);
}

bool parseNpy(const std::string &bytes, const std::string &path, DType declared,
              HostTensor &out, std::string &error) {
  return parseNpyPrefix(bytes, bytes.size(), path, declared, out, error);
}

namespace {

bool parseNpyPrefix(const std::string &bytes, uint64_t fileSize,
                    const std::string &path, DType declared, HostTensor &out,
                    std::string &error) {
  auto fail = [&](const std::string &why) {
    error = "'" + path + "' is not a valid .npy file: " + why;
    return false;
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    return fail("missing the \\x93NUMPY magic");
  int major = static_cast<unsigned char>(bytes[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = static_cast<unsigned char>(bytes[8]) |
                   (static_cast<unsigned char>(bytes[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return fail("truncated header");
    headerLength = 0;
    for (int i = 3; i >= 0; --i)
      headerLength =
          (headerLength << 8) | static_cast<unsigned char>(bytes[8 + i]);
    headerStart = 12;
  } else {
    return fail("unsupported format version " + std::to_string(major));
  }
  if (bytes.size() < headerStart + headerLength)
    return fail("truncated header");
  std::string header = bytes.substr(headerStart, headerLength);
  std::string descr, fortran, shapeText;
  if (!headerField(header, "descr", descr) ||
      !headerField(header, "fortran_order", fortran) ||
      !headerField(header, "shape", shapeText))
    return fail("header lacks descr, fortran_order or shape");
  if (fortran != "False")
    return fail("Fortran-ordered arrays are not supported");
  std::vector<int64_t> shape;
  if (!parseShape(shapeText, shape))
    return fail("cannot read the shape " + shapeText);
  std::string expected = std::string("'") + npyDescriptor(declared) + "'";
  if (descr != expected) {
    error = "'" + path + "' holds " + descr + " elements but " +
            dtypeName(declared) + " (" + npyDescriptor(declared) +
            ") is declared";
    return false;
  }
  int64_t count = 1;
  for (int64_t d : shape)
    if (d != 0 && count > (int64_t(1) << 40) / d)
      return fail("shape " + shapeText + " is too large");
    else
      count *= d;
  out.dtype = declared;
  out.shape = shape;
  size_t width = dtypeBytes(declared);
  size_t dataStart = headerStart + headerLength;
  if (fileSize - dataStart != count * width)
    return fail("holds " + std::to_string(fileSize - dataStart) +
                " data bytes but shape " + shapeText + " needs " +
                std::to_string(count * width));
  if (bytes.size() != fileSize)
    return true; // the header of a longer file: its body is read next
  out.data = tensorValues(
      declared,
      reinterpret_cast<const unsigned char *>(bytes.data()) + dataStart, count);
  return true;
}

} // namespace

bool writeNpy(const std::string &path, const HostTensor &tensor,
              std::string &error) {
  std::string shape = "(";
  for (int64_t d : tensor.shape)
    shape += std::to_string(d) + ", ";
  if (tensor.shape.size() > 1)
    shape.erase(shape.size() - 2);
  else if (tensor.shape.size() == 1)
    shape.erase(shape.size() - 1);
  shape += ")";
  std::string header = std::string("{'descr': '") +
                       npyDescriptor(tensor.dtype) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so the data starts on a 64-byte boundary.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  // Written under a name of its own beside `path` and renamed over it once
  // complete (ein/staged_file.h): a failed write leaves what was there, two
  // writers at once leave one whole file, and the rename replaces a link at
  // `path` (or a file a process has mapped, such as a bundle's kernel
  // library) instead of writing through it.
  unsigned char length[2] = {static_cast<unsigned char>(header.size() & 0xff),
                             static_cast<unsigned char>(header.size() >> 8)};
  std::string head("\x93NUMPY\x01\x00", 8);
  head.append(reinterpret_cast<const char *>(length), 2);
  head += header;
  std::vector<unsigned char> data = tensorBytes(tensor);
  StagedFile file(path);
  if (!file.open() || !file.write(head.data(), head.size()) ||
      !file.write(data.data(), data.size()) || !file.commit()) {
    error = file.error();
    return false;
  }
  return true;
}

} // namespace ein
