"""The residual block the attention tests put their attention modules in: two 3x3 convs with batch norms of
statistics that make folding matter, the attention on the second's output, a shortcut (a 1x1 conv and batch norm
where the shape changes), ReLU after the sum."""

import torch

nn = torch.nn


class AttentionBlock(nn.Module):
    def __init__(self, n_in, n_out, stride, attention):
        super().__init__()
        self.conv1 = nn.Conv2d(n_in, n_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(n_out)
        self.conv2 = nn.Conv2d(n_out, n_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(n_out)
        self.attention = attention
        self.shortcut = nn.Sequential() if stride == 1 and n_in == n_out else nn.Sequential(
            nn.Conv2d(n_in, n_out, 1, stride, bias=False), nn.BatchNorm2d(n_out))
        for bn in (self.bn1, self.bn2):
            bn.running_mean.uniform_(-0.3, 0.3)
            bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        y = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
        return torch.relu(self.attention(y) + self.shortcut(x))
