// The node stand-in's own path, parts of paths, and the text files it reads and appends to.
#pragma once

#include <optional>
#include <string>

namespace dxshim::test::node_standin {

// The full path of this program's executable ("" if it cannot be had).
std::wstring SelfPath();
// PATH's folder ("." when it has none) and its last component.
std::wstring FolderOf(const std::wstring& path);
std::wstring FileNameOf(const std::wstring& path);

// A path rooted without a drive (one leading / or \: kubeadm's /var/lib/kubelet/config.yaml,
// image-builder's --log-file=/var/log/kubelet/kubelet.err.log) on the drive of the current
// directory, as Windows resolves it (a service's is %SystemRoot%\system32); any other path as it
// is. Made explicit because wine reads a path that starts with / as a Unix one.
std::wstring OnTheCurrentDrive(std::wstring path);

// One line added to FILE: opened, appended and closed each time, shared so that tests (and other
// stand-ins) can read and write it meanwhile.
void AppendLine(const std::wstring& file, const std::string& line);

// Appends `start <pid> <command line>` of this process to LOG_NAME next to the executable.
void LogStart(const wchar_t* log_name);

// A text file's contents as UTF-8 (a UTF-16LE file, as PowerShell 5 writes them, converted; a
// UTF-8 byte order mark dropped), or nothing if it cannot be read.
std::optional<std::string> ReadTextFile(const std::wstring& path);

}  // namespace dxshim::test::node_standin
